# Generates methods/testdata/flare/modifier_cases.json: runs TokenRAG.modifier, read at run time from
# the authors' src/generate_baselines.py (path in argv[1]), on random inputs with a stub sentence splitter
# and a minimal numpy stand-in. Usage: python3 gen_modifier_cases.py generate_baselines.py > modifier_cases.json
import ast, json, math, random, sys
src = open(sys.argv[1]).read()  # the authors' src/generate_baselines.py
tree = ast.parse(src)
fn = None
for node in tree.body:
    if isinstance(node, ast.ClassDef) and node.name == 'TokenRAG':
        for f in node.body:
            if isinstance(f, ast.FunctionDef) and f.name == 'modifier':
                fn = ast.get_source_segment(src, f)
import textwrap
fn = textwrap.dedent(fn)
class NP:
    @staticmethod
    def array(x): return list(x)
    @staticmethod
    def mean(x): return sum(x)/len(x) if x else float('nan')
    @staticmethod
    def max(x): return max(x)
    @staticmethod
    def min(x): return min(x)
class Sent:
    def __init__(s, t): s.text = t
class Doc:
    def __init__(s, sents): s.sents = [Sent(x) for x in sents]
CUR = {}
def nlp(text): return Doc(CUR['sents'])
g = {'np': NP, 'exp': math.exp, 'nlp': nlp, 'logger': None}
exec(fn, g)
modifier = g['modifier']
class Self: pass
words = ["Alpha","was","born","in","Paris","He","died","1990","The","film","Café","Zoë","directed","by","Bo","is","a","capital","of","Norway","so","the","answer"]
random.seed(7)
cases = []
for n in range(200):
    ns = random.randint(1, 4)
    sents = []
    for _ in range(ns):
        k = random.randint(1, 6)
        ws = [random.choice(words) for _ in range(k)]
        ws[0] = ws[0][0].upper() + ws[0][1:]
        sents.append(" ".join(ws) + ".")
    text = " ".join(sents)
    lead = random.random() < 0.5
    if lead: text = " " + text
    # tokenization: words with leading space; sometimes split a word, sometimes strip spaces
    toks = []
    i = 0
    pieces = text.replace(" ", "\x00 ").split("\x00")
    pieces = [p for p in pieces if p]
    style = random.choice(["space", "nospace", "split"])
    for p in pieces:
        if style == "nospace": p2 = p.strip() or p
        else: p2 = p
        if style == "split" and len(p2) > 4 and random.random() < 0.5:
            c = random.randint(1, len(p2)-1); toks += [p2[:c], p2[c:]]
        else: toks.append(p2)
    probs = [random.choice([0.99, 0.95, 0.9, 0.6, 0.3, 0.05]) for _ in toks]
    lps = [math.log(p) for p in probs]
    thr = random.choice([0.1, 0.08, 0.2])
    solver = random.choice(["avg", "avg", "max", "min"])
    s = Self(); s.sentence_solver = solver; s.hallucination_threshold = thr; s.debug = False
    CUR['sents'] = [x for x in sents]
    try:
        prev, curr, hall = modifier(s, text, toks, lps)
        out = {"prev": prev if hall else "", "masked": curr if hall else "", "hallucinated": hall}
    except ValueError as e:
        out = {"raises": str(e)}
    cases.append({"text": text, "sentences": sents, "tokens": toks, "logprobs": lps, "threshold": thr, "solver": solver, **out})
json.dump({"source": "outputs of TokenRAG.modifier (ZhishanQ/QuCo-RAG src/generate_baselines.py) run on these inputs with the sentences given", "cases": cases}, sys.stdout, ensure_ascii=False, separators=(",", ":"))
