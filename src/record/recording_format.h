/* Identity of the gpuwhy recording file format (SQLite): PRAGMA application_id and
 * user_version. The schema itself is documented in docs/recording-format.md and created
 * by record/writer.c. */
#ifndef GW_RECORD_RECORDING_FORMAT_H
#define GW_RECORD_RECORDING_FORMAT_H

/* "GPWY" as a big-endian 32-bit integer. */
#define GW_RECORDING_APPLICATION_ID 0x47505759
/* Bump when the schema changes incompatibly; readers refuse newer versions.
 * 2: disks, interfaces and GPU process lists are written only when they changed (the
 *    reader carries the last written rows forward; docs/recording-format.md), and some
 *    slow values are read every few intervals. Readers of version 2 read version 1 too. */
#define GW_RECORDING_USER_VERSION 2

#endif
