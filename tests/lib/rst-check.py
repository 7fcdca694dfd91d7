#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Parse each reStructuredText file with docutils, as rst2man and any
# renderer would, and fail on anything it reports (a malformed table, a
# broken title, a bad indent): docutils renders such a file anyway, with
# the damage in it.  Used by make lint.
#
# usage: rst-check.py FILE...
import io
import sys

import docutils.core

bad = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    msgs = io.StringIO()
    docutils.core.publish_doctree(
        text, source_path=path,
        settings_overrides={"report_level": 2, "halt_level": 5,
                            "warning_stream": msgs})
    if msgs.getvalue():
        sys.stdout.write(msgs.getvalue())
        bad += 1
sys.exit(1 if bad else 0)
