#!/usr/bin/env bash
# Writes gpuwhy(1) from the binary's own help: `gpuwhy --help` as the description and each
# `gpuwhy COMMAND --help` as a subsection, so the manual can never disagree with the
# program. Used by the build (the man page installed by `make install` and the .deb).
# Usage: scripts/make_manpage.sh GPUWHY_BINARY OUTPUT
set -euo pipefail
bin=$1 out=$2
# roff: a backslash is \e; a line starting with . or ' would be a request.
escape() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
version=$("$bin" --version | awk '{print $2}')
commands=$("$bin" --help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{exit}')
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
    "$bin" --help | escape
    echo ".fi"
    echo ".SH COMMANDS"
    for c in $commands; do
        echo ".SS gpuwhy $c"
        echo ".nf"
        "$bin" "$c" --help | escape
        echo ".fi"
    done
    echo ".SH FILES"
    echo "Documentation of the formats, the diagnoses and the exporter's metrics: /usr/share/doc/gpuwhy/."
} >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
