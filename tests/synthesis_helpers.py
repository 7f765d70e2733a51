"""The small table the synthetic sets' publication-check and release-report tests share: 12 people, one (Gus)
with a rare QI combination (note 'rare')."""

CSV = """name,age,sex,note,disease
Ann,34,F,ok,flu
Bob,36,M,ok,cold
Cid,35,M,ok,flu
Dee,52,F,ok,asthma
Eve,55,F,ok,flu
Fay,58,F,ok,cold
Gus,71,M,rare,flu
Hal,23,M,ok,flu
Ida,34,F,ok,flu
Jon,36,M,ok,cold
Kim,52,F,ok,flu
Lou,23,M,ok,flu
"""
ROLES = {"name": "identifying", "age": "quasi-identifying", "sex": "quasi-identifying", "note": "quasi-identifying",
         "disease": "sensitive"}
