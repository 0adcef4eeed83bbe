set -u
R=$OUT/r5; mkdir -p $R
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
python3 docs/results/corpus-clusters-2026-11-29/commands/hostprof.py 128,4096,4096 > $R/prof_128.txt 2>&1
python3 docs/results/corpus-clusters-2026-11-29/commands/hostprof.py 16,4096,14336 > $R/prof_16.txt 2>&1
head -60 $R/prof_128.txt
