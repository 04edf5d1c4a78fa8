/* The gpuwhy subcommands; each lives in its own cmd_<name>.c and returns the process exit
 * code (util/error.h GW_EXIT_*). argv[0] is the subcommand name. */
#ifndef GW_CLI_COMMANDS_H
#define GW_CLI_COMMANDS_H

typedef struct gw_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;     /* one line for `gpuwhy --help` */
} gw_command;

int gw_cmd_analyze(int argc, char **argv);
int gw_cmd_run(int argc, char **argv);
int gw_cmd_attach(int argc, char **argv);
int gw_cmd_report(int argc, char **argv);
int gw_cmd_export(int argc, char **argv);
int gw_cmd_compare(int argc, char **argv);
int gw_cmd_top(int argc, char **argv);
int gw_cmd_serve(int argc, char **argv);
int gw_cmd_doctor(int argc, char **argv);

/* The table, terminated by a NULL name. */
extern const gw_command GW_COMMANDS[];

#endif
