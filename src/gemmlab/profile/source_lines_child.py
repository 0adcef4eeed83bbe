"""The program ``source_lines`` runs in each child process: decode the per-line counters of a share of
a report's launches (``source_lines.decode_lines``) and print them as JSON; a user's error goes to
stderr as one line with its exit code, which the parent turns back into the same error (as
``ncu_rep_child`` does for the launch records, and for the same reason: ``ncu_rep_isolated``).

    python -m gemmlab.profile.source_lines_child PATH [--launches 0,3,5] [--shard I/K]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gemmlab.errors import UserError
from gemmlab.profile.source_lines import decode_lines


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m gemmlab.profile.source_lines_child")
    ap.add_argument("path", type=Path)
    ap.add_argument("--launches", help="comma-separated launch ids (default: every launch)")
    ap.add_argument("--shard", default="0/1", help="I/K: decode the chosen launches whose position is I modulo K")
    args = ap.parse_args(argv)
    shard, shards = (int(x) for x in args.shard.split("/"))
    ids = [int(x) for x in args.launches.split(",") if x] if args.launches is not None else None
    try:
        payload = decode_lines(args.path, ids, shard, shards)
    except UserError as e:
        print(f"gemmlab: error: {e.message}", file=sys.stderr)
        return e.code
    sys.stdout.write(json.dumps(payload, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
