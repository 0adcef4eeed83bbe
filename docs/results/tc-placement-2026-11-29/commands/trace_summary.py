"""Run 1's per-tile timelines (trace.py's npz) summed up, on the CPU:

    python docs/results/tc-placement-2026-11-29/commands/trace_summary.py \
        docs/results/tc-placement-2026-11-29/r1/trace_a.npz

Per variant and shape: the kernel's span (first CTA's entry to the last tile's store, globaltimer),
the spread of the CTAs' entries and of their last stores, the SM clock (clock64 over globaltimer
across each tile), a tile's mainloop (turn taken to last MMA done, SM cycles) by the CTA's item
index, and which SM the first 24 blocks ran on (run 0).
Trace words per tile slot: 0 globaltimer after the turn, 1 globaltimer after the store, 2-5
clock64 after the turn / mainloop issued / MMAs done / store, 6 smid | m << 12 | n << 24 |
warpgroup << 40, 7 valid; slot 47 is the CTA's entry (words 0, 2, 6)."""
import sys

import numpy as np


def main(path):
    d = np.load(path)
    for key in sorted(k for k in d.files if not k.endswith("_us")):
        T = d[key].astype(np.int64)[:, :132]
        valid = T[:, :, :47, 7] == 1
        entry = T[:, :, 47, 0]
        spans, starts, ends, ghz = [], [], [], []
        for r in range(T.shape[0]):
            v = valid[r]
            last = np.where(v, T[r, :, :47, 1], 0).max(1)
            t0 = entry[r].min()
            spans.append((last.max() - t0) / 1e3)
            starts.append((entry[r].max() - t0) / 1e3)
            ends.append((last.max() - last.min()) / 1e3)
            dt = T[r, :, :47, 1] - T[r, :, :47, 0]
            f = (T[r, :, :47, 5] - T[r, :, :47, 2])[v & (dt[...] > 0)] / dt[v & (dt > 0)]
            ghz.append(np.median(f))
        tiles = int(valid[0].sum())
        print(f"{key}: {T.shape[0]} runs, {tiles} tiles; span {np.median(spans):.1f} us "
              f"(min {min(spans):.1f}), entries spread {np.median(starts):.2f} us, last stores "
              f"spread {np.median(ends):.1f} us, SM clock {np.median(ghz):.3f} GHz")
        ml = T[:, :, :47, 4] - T[:, :, :47, 2]
        items = int(valid.sum(2).max())
        row = [f"{j}:{np.median(ml[:, :, j][valid[:, :, j]]):.0f}" for j in range(items)]
        print("   mainloop cycles by item:", " ".join(row))
        print("   blocks 0-23 on SMs:", T[0, :24, 47, 6].tolist())
        # by group of 16 SM ids: CTAs with the most tiles, and when they and the rest end
        rows = []
        for g in range(9):
            most, ends_most, ends_rest = [], [], []
            for r in range(T.shape[0]):
                v = valid[r]
                n = v.sum(1)
                last = (np.where(v, T[r, :, :47, 1], 0).max(1) - entry[r].min()) / 1e3
                m = T[r, :, 47, 6] // 16 == g
                top = n == n.max()
                most.append((m & top).sum())
                ends_most += list(last[m & top])
                ends_rest += list(last[m & ~top])
            if any(most) or ends_rest:
                rows.append(f"{g}: {np.mean(most):.0f} of {int((T[0, :, 47, 6] // 16 == g).sum())}"
                            f" with {int(valid[0].sum(1).max())}, end "
                            + (f"{np.mean(ends_most):.1f}" if ends_most else "-") + " / "
                            + (f"{np.mean(ends_rest):.1f}" if ends_rest else "-"))
        print("   SM ids // 16: CTAs with the most tiles, mean end of those / of the rest (us):")
        print("     " + "; ".join(rows))


if __name__ == "__main__":
    main(sys.argv[1])
