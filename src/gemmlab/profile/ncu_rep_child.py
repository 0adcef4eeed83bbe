"""The program ``ncu_rep_isolated`` runs in each child process: decode a share of a report's launches
(``ncu_rep.decode``) and print them as JSON; a user's error goes to stderr as one line with its exit
code, which the parent turns back into the same error.

    python -m gemmlab.profile.ncu_rep_child PATH [--metrics needed|all] [--shard I/K] [--source NAME]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gemmlab.errors import UserError
from gemmlab.profile.ncu_rep import decode


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m gemmlab.profile.ncu_rep_child")
    ap.add_argument("path", type=Path)
    ap.add_argument("--metrics", default="needed", choices=("needed", "all"))
    ap.add_argument("--shard", default="0/1", help="I/K: decode the launches whose index is I modulo K")
    ap.add_argument("--source", help="the report's name in errors (default: PATH)")
    args = ap.parse_args(argv)
    shard, shards = (int(x) for x in args.shard.split("/"))
    try:
        payload = decode(args.path, args.metrics, shard, shards, source=args.source)
    except UserError as e:
        print(f"gemmlab: error: {e.message}", file=sys.stderr)
        return e.code
    sys.stdout.write(json.dumps(payload, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
