#!/usr/bin/env python3
"""Derive the hand-edited test traces from the recorded ones (run from this directory):
pvm-timer-lost.txt: the 50th-59th timer accepts removed, as if the ring buffer lost them, plus a
  `[LOST 10 EVENTS]` marker; pvm-ipi-reordered.txt: for the 100th-104th IPIs, the ICR write and
  the accept swap timestamps (the accept now precedes the write)."""
import re

def edit(src, dst, fn):
    lines = open(src).read().split('\n')
    sep = lines.index('# --- trace ---')
    head, body = lines[:sep + 1], lines[sep + 1:]
    open(dst, 'w').write('\n'.join(head + fn(body)))

def lose(body):
    out, n = [], 0
    for l in body:
        if 'kvm_apic_accept_irq: apicid 0 vec 236' in l:
            n += 1
            if 50 <= n < 60:
                continue
        out.append(l)
    out.insert(20, 'CPU:1 [LOST 10 EVENTS]')
    return out

TS = re.compile(r'(\] \S+ )(\d+):')

def reorder(body):
    n = 0
    for i, l in enumerate(body):
        if 'kvm_apic_ipi: dst 1 ' in l:
            n += 1
            if 100 <= n < 105:
                j = next(j for j in range(i + 1, len(body)) if 'kvm_apic_accept_irq: apicid 1 vec 224' in body[j])
                a, b = TS.search(body[i]).group(2), TS.search(body[j]).group(2)
                body[i] = TS.sub(lambda m: m.group(1) + b + ':', body[i], count=1)
                body[j] = TS.sub(lambda m: m.group(1) + a + ':', body[j], count=1)
    return body

edit('pvm-timer.txt', 'pvm-timer-lost.txt', lose)
edit('pvm-ipi.txt', 'pvm-ipi-reordered.txt', reorder)
