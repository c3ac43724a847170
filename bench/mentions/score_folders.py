#!/usr/bin/env python3
"""Score our folder-mention verdicts (`src/api/`) against build_folder_truth.py.

score_files.py's scorer, figures and options, on the mentions of form "folder" and the rows
of folder_truth/ (whose labels are file truth's: `no_file` is no folder of that path when
the memory line was written).

Usage:
    score_folders.py [--split dev|test|corpus|holdout24|holdout31|all] [--only OWNER/NAME ...]
                     [--src PATH] [--work DIR] [--json-out FILE] [--show-disagreements]
    score_folders.py --oracle --split all   # the truth's own verdicts: every figure 1.0
"""

from __future__ import annotations

import sys

import score_files

score_files.FORM = "folder"
score_files.TRUTH = score_files.HERE / "folder_truth"
score_files.__doc__ = __doc__  # its --help describes this scorer, not the files'

if __name__ == "__main__":
    sys.exit(score_files.main())
