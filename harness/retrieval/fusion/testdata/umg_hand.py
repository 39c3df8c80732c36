#!/usr/bin/env python3
"""Independent computation of the UMG/UMGP hand case (umg_hand.json), written from the method's
description and not from the Go code: two experts (bm25, dense), three units per granularity
(2, 4 and 8 sentences of one document "d"), each normalisation and each weighting.

Run: python3 umg_hand.py > umg_hand.json
"""
import json, math

tokens = {
    "d#g2:0-2": 20, "d#g2:1-3": 20, "d#g2:8-10": 16,
    "d#g4:0-4": 40, "d#g4:2-6": 36, "d#g4:8-12": 44,
    "d#g8:0-8": 80, "d#g8:1-9": 82, "d#g8:4-12": 81,
}
def span(u):
    g, se = u.split("#g")[1].split(":")
    s, e = se.split("-")
    return int(g), int(s), int(e)
parent = {"d#g2:0-2": "d#g8:0-8", "d#g2:1-3": "d#g8:0-8", "d#g2:8-10": "d#g8:4-12",
          "d#g4:0-4": "d#g8:0-8", "d#g4:2-6": "d#g8:0-8", "d#g4:8-12": "d#g8:4-12"}
lists = [
    ("bm25@2", [("d#g2:0-2", 3), ("d#g2:1-3", 2), ("d#g2:8-10", 1)]),
    ("bm25@4", [("d#g4:8-12", 4)]),
    ("bm25@8", [("d#g8:0-8", 10), ("d#g8:1-9", 10), ("d#g8:4-12", 5)]),
    ("dense@2", [("d#g2:0-2", .5), ("d#g2:1-3", .5), ("d#g2:8-10", .5)]),
    ("dense@4", [("d#g4:0-4", .9), ("d#g4:2-6", .3)]),
    ("dense@8", [("d#g8:1-9", .8), ("d#g8:4-12", .5), ("d#g8:0-8", .4)]),
]

def dist(scores, norm):
    if norm == "softmax":
        m = max(scores); e = [math.exp(s - m) for s in scores]; z = sum(e)
        return [x / z for x in e]
    if norm == "minmax":
        lo, hi = min(scores), max(scores)
        scores = [1.0 if hi == lo else (s - lo) / (hi - lo) for s in scores]
    z = sum(scores)
    return [s / z for s in scores]

def conf(p):
    n = len(p)
    if n < 2:
        return 0.0, 1.0
    if min(p) == max(p):
        return 1.0, 0.0
    h = min(1.0, max(0.0, -sum(x * math.log(x) for x in p if x > 0) / math.log(n)))
    return h, 1 - h

def ranked(items):  # items: (id, P)
    r = [(u, P, P / math.sqrt(tokens[u])) for u, P in items]
    r.sort(key=lambda t: (-t[2], t[0]))
    return r

def overlap(a, b):
    _, s1, e1 = span(a); _, s2, e2 = span(b)
    n = min(e1, e2) - max(s1, s2)
    return max(n, 0) / min(e1 - s1, e2 - s2)

def select(r, k, maxov, budget=0):
    kept, dec, used = [], [], 0
    for u, P, R in r:
        if len(kept) == k:
            break
        if budget and used + tokens[u] > budget:
            dec.append({"id": u, "verdict": "skip-budget"}); continue
        hit = next((x for x in kept if overlap(u, x) > maxov), None)
        if hit:
            dec.append({"id": u, "verdict": "skip-overlap", "with": hit, "overlap": overlap(u, hit)}); continue
        kept.append(u); used += tokens[u]; dec.append({"id": u, "verdict": "select"})
    return kept, dec

cases = []
for norm in ["minmax", "softmax", "sum"]:
    for weights in ["normalized", "confidence"]:
        pairs, ds = [], []
        for key, c in lists:
            p = dist([s for _, s in c], norm); ds.append(p)
            h, cf = conf(p)
            pairs.append({"key": key, "n": len(p), "entropy": h, "confidence": cf})
        tot = sum(p["confidence"] for p in pairs)
        for p in pairs:
            p["weight"] = p["confidence"] / tot if weights == "normalized" else p["confidence"]
        P, order = {}, []
        for (key, c), p, st in zip(lists, ds, pairs):
            for (u, _), x in zip(c, p):
                if u not in P:
                    order.append(u); P[u] = 0.0
                P[u] += st["weight"] * x
        fused = sorted([(u, P[u]) for u in order if P[u] > 0], key=lambda t: (-t[1], t[0]))
        umg = ranked(fused)
        umg_sel, _ = select(umg, 5, 1.0)
        # UMGP
        groups = {}
        for u, _ in fused:
            if span(u)[0] in (2, 4):
                groups.setdefault(parent[u], {"parent": parent[u], "members": [], "sum": 0.0})
        for u, x in fused:
            if u in groups:
                groups[u]["members"].append(u); groups[u]["sum"] += x
        passthru = []
        for u, x in fused:
            if span(u)[0] in (2, 4):
                g = groups[parent[u]]; g["members"].append(u); g["sum"] += x
            elif u not in groups:
                passthru.append((u, x))
        proms = []
        for p in sorted(groups):
            g = groups[p]; g["score"] = min(g["sum"], 1.0); g["capped"] = g["sum"] > 1.0
            proms.append(g)
        umgp = ranked(passthru + [(g["parent"], g["score"]) for g in proms])
        umgp_sel, umgp_dec = select(umgp, 5, 0.75)
        _, budget_dec = select(umgp, 5, 0.75, budget=100)
        cases.append({
            "normalization": norm, "weights": weights, "pairs": pairs,
            "fused": [{"id": u, "score": x} for u, x in fused],
            "umg_ranked": [{"id": u, "p": x, "r": r} for u, x, r in umg],
            "umg_selected": umg_sel,
            "promotions": proms,
            "umgp_ranked": [{"id": u, "p": x, "r": r} for u, x, r in umgp],
            "umgp_selected": umgp_sel, "umgp_decisions": umgp_dec,
            "umgp_budget100_decisions": budget_dec,
        })
print(json.dumps({"tokens": tokens, "parent": parent,
                  "lists": [{"key": k, "candidates": [{"id": u, "score": s} for u, s in c]} for k, c in lists],
                  "cases": cases}, indent=1))
