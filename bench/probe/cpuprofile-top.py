#!/usr/bin/env python3
"""Summaries of V8 .cpuprofile files (node --cpu-prof): per file, its span, what share of it was
idle, GC and program, and the functions with the most self time (of the busy time). Used where the
profiles cannot come back whole (the GPU host returns a few small files).
  python3 bench/probe/cpuprofile-top.py DIR [--top 20]
"""
import collections
import glob
import json
import os
import sys

top = int(sys.argv[sys.argv.index('--top') + 1]) if '--top' in sys.argv else 20
for path in sorted(glob.glob(os.path.join(sys.argv[1], '*.cpuprofile')), key=os.path.getmtime):
    profile = json.load(open(path))
    nodes = {n['id']: n['callFrame'] for n in profile['nodes']}
    self_us = collections.Counter()
    for sample, delta in zip(profile['samples'], profile['timeDeltas']):
        frame = nodes[sample]
        self_us[(frame['functionName'] or '(anonymous)', os.path.basename(frame['url']), frame['lineNumber'] + 1)] += delta
    span = sum(self_us.values())
    idle = sum(v for k, v in self_us.items() if k[0] == '(idle)')
    busy = max(1, span - idle)
    gc = sum(v for k, v in self_us.items() if k[0] == '(garbage collector)')
    print(f'== {os.path.basename(path)}: {span / 1e6:.2f} s, busy {busy / span * 100:.0f}%, GC {gc / busy * 100:.0f}% of busy')
    for (name, url, line), us in self_us.most_common(top + 1):
        if name == '(idle)':
            continue
        print(f'  {us / busy * 100:5.1f}%  {name}  {url}:{line}')
