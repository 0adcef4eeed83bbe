"""Run 7: SM clock, power and throttle reasons from r7/smi.csv.xz per segment of r7/marks.txt
(samples drawing over 200 W: a kernel running). Usage: python3 smi_segments.py R7_DIR"""
import csv
import lzma
import sys

d = sys.argv[1]
marks = [line.split() for line in open(f"{d}/marks.txt")]


def sec(t):
    h, m, s = t.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


rows = [(sec(r[0].strip().split()[1]), int(r[1].split()[0]), float(r[2].split()[0]), int(r[3]),
         r[4].strip()) for r in csv.reader(lzma.open(f"{d}/smi.csv.xz", "rt"))]
for i in range(0, len(marks), 2):
    s, e = marks[i], marks[i + 1]
    a, b = sec(s[0][:15]), sec(e[0][:15])
    busy = [r for r in rows if a <= r[0] <= b and r[2] > 200]
    clocks, power = sorted(r[1] for r in busy), sorted(r[2] for r in busy)
    capped = sum(r[4] == "0x0000000000000004" for r in busy)
    print(f"{s[2]:5s} {s[3]:10s} samples {len(busy):3d}  SM clock median {clocks[len(clocks) // 2]} MHz"
          f" (min {clocks[0]})  power median {power[len(power) // 2]:.0f} W (max {power[-1]:.0f})"
          f"  under the software power cap in {capped}")
