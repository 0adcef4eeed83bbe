"""Map each profiled kernel of a corpus report to its case: the NVTX push/pop range it ran in.

    python3 benchmarks/corpus/index.py REPORT.ncu-rep > index.json

Runs where ``ncu_report`` imports (the device machine: ncu's extras/python). Writes a JSON list, one
entry per action in report order: ``{"id", "case", "name", "demangled"}``; ``id`` is the ID column of the
raw and details pages exported from the same report.
"""

import json
import sys


def main(path: str) -> int:
    import ncu_report

    ctx = ncu_report.load_report(path)
    out, i = [], 0
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            act = rng.action_by_idx(a)
            # the workload's range, in the default domain (libraries such as CUB push their own): its
            # push/pop range on the launching thread, else its start/end range (process-wide: a
            # backward pass launches from autograd's thread, outside the main thread's push/pop stack)
            ranges = []
            state = act.nvtx_state()
            if state is not None:
                for d in state.domains():
                    dom = state.domain_by_id(d)
                    if dom.name() == "<default domain>":
                        ranges.extend(dom.push_pop_ranges())
                        ranges.extend(dom.start_end_ranges())
            out.append({"id": i, "case": ranges[0] if ranges else "", "name": act.name(),
                        "demangled": act.name(act.NameBase_DEMANGLED)})
            i += 1
    json.dump(out, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
