#!/usr/bin/env bash
# Writes gpuwhy(1) from the binary's own help: `gpuwhy --help` as the description and each
# `gpuwhy COMMAND --help` as a subsection, so the manual can never disagree with the
# program. Used by the build (the man page installed by `make install` and the .deb).
# Usage: scripts/make_manpage.sh GPUWHY_BINARY OUTPUT [EMULATOR...]
# (EMULATOR: how to run a cross-built binary here, e.g. qemu-aarch64-static)
set -euo pipefail
bin=$1 out=$2
shift 2
emulator=("$@")
run_gpuwhy() { "${emulator[@]}" "$bin" "$@"; }
# roff: a backslash is \e; a line starting with . or ' would be a request.
escape() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
version=$(run_gpuwhy --version | awk '{print $2}')
commands=$(run_gpuwhy --help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{exit}')
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
    echo ".TH GPUWHY 1 \"\" \"gpuwhy $version\" \"User Commands\""
    echo ".SH NAME"
    echo "gpuwhy \\- the GPU says 20%: where did its time go?"
    echo ".SH SYNOPSIS"
    echo ".B gpuwhy"
    echo "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] ..."
    echo ".SH DESCRIPTION"
    echo ".nf"
    run_gpuwhy --help | escape
    echo ".fi"
    echo ".SH COMMANDS"
    for c in $commands; do
        echo ".SS gpuwhy $c"
        echo ".nf"
        run_gpuwhy "$c" --help | escape
        echo ".fi"
    done
    echo ".SH FILES"
    echo "Documentation of the formats, the diagnoses and the exporter's metrics: /usr/share/doc/gpuwhy/."
} >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
