for f in tests/fixtures/corpus/h100/*_raw.csv tests/fixtures/corpus/h100/*_details.csv tests/fixtures/corpus/h100_grown/*_raw.csv tests/fixtures/corpus/h100_grown/*_details.csv; do
  .venv/bin/python -m gemmlab analyze $f --all --json 2>/dev/null | python3 -c "
import json,sys
d=json.load(sys.stdin)
for k in d['kernels']:
    p=k['primary']; print('$f', k['id'], p['category'], p['confidence'], [ (f['category'],f['confidence']) for f in k['findings']])
"
done
