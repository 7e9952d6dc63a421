#!/usr/bin/env python3
"""Top self-time functions of a V8 .cpuprofile (node --cpu-prof), and the slowest single samples.

  python3 tools/cpuprofile-top.py PROFILE [N]
"""
import collections
import json
import sys

profile = json.load(open(sys.argv[1]))
top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
nodes = {n['id']: n for n in profile['nodes']}
parents = {}
for n in profile['nodes']:
    for c in n.get('children', []):
        parents[c] = n['id']
self_us = collections.Counter()
for sample, delta in zip(profile['samples'], profile['timeDeltas']):
    frame = nodes[sample]['callFrame']
    self_us[f"{frame['functionName'] or '(anonymous)'} {frame['url'].split('/')[-1]}:{frame['lineNumber'] + 1}"] += delta
total = sum(self_us.values())
print(f'{total / 1e6:.2f} s sampled')
for name, us in self_us.most_common(top):
    print(f'{us / total * 100:5.1f}%  {us / 1e3:9.1f} ms  {name}')


def stack(node_id):
    out = []
    while node_id in nodes and len(out) < 14:
        f = nodes[node_id]['callFrame']
        out.append(f"{f['functionName'] or '(anon)'}@{f['url'].split('/')[-1]}:{f['lineNumber'] + 1}")
        node_id = parents.get(node_id)
    return ' < '.join(out)


# Long gaps between samples are long uninterrupted native calls: show what was on the stack.
gaps = sorted(zip(profile['timeDeltas'][1:], profile['samples'][:-1]), reverse=True)[:8]
print('longest single samples:')
for delta, sample in gaps:
    print(f'  {delta / 1e3:8.1f} ms  {stack(sample)}')
