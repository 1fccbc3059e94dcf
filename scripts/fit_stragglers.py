#!/usr/bin/python3
"""Fits gbasim's default straggler settings to the Alibaba PAI mini-batch time traces.

Usage: fit_stragglers.py [TRACE_DIR]   (default: ../shared/traces/alibaba-pai-minibatch)

For each job it reads (worker, iteration, batch_time_norm), divides every sample by the median
worker at the same iteration (the slowdown), and reports:
  - the coefficient of variation of batch times across workers at one iteration (median over
    iterations): what per-step noise must reproduce;
  - each worker's mean slowdown over the job: persistent differences;
  - slow episodes: runs of a worker's consecutive samples (one every 10 iterations) with a
    slowdown of 1.5 or more.
It then prints the fitted settings: noise_cv = the median of the jobs' CVs; persistent_fraction
= the share of workers whose mean slowdown exceeds 1.04, persistent_slowdown = their mean
slowdown; transient episodes per worker-iteration and their mean length in iterations.
"""
import csv
import os
import statistics as st
import sys
from collections import defaultdict


def read_job(path):
    samples = defaultdict(dict)  # iteration -> worker -> time
    with open(path, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            try:
                samples[int(row["time"])][int(row["worker"])] = float(row["batch_time_norm"])
            except (KeyError, ValueError) as e:
                sys.exit(f"fit_stragglers.py: {path}:{line}: malformed row ({e})")
    return samples


def main(argv):
    folder = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "shared", "traces",
                                                         "alibaba-pai-minibatch")
    paths = sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith("_norm.csv")) \
        if os.path.isdir(folder) else []
    if not paths:
        sys.exit(f"fit_stragglers.py: no *_norm.csv traces in {folder}")
    cvs, slow_workers, slow_means, workers_total = [], 0, [], 0
    episodes, episode_lengths, worker_iterations = 0, [], 0
    for path in paths:
        samples = read_job(path)
        per_worker = defaultdict(list)  # worker -> [(iteration, slowdown)]
        job_cvs = []
        for iteration in sorted(samples):
            times = samples[iteration]
            if len(times) < 5:
                continue
            median = st.median(times.values())
            job_cvs.append(st.pstdev(times.values()) / st.mean(times.values()))
            for w, t in times.items():
                per_worker[w].append((iteration, t / median))
        means = {w: st.mean(s for _, s in v) for w, v in per_worker.items()}
        for w, series in per_worker.items():
            run = 0
            for _, s in series + [(None, 0.0)]:
                if s >= 1.5:
                    run += 1
                elif run:
                    episodes += 1
                    episode_lengths.append(10 * run)
                    run = 0
            worker_iterations += 10 * len(series)
        slow = [m for m in means.values() if m > 1.04]
        slow_workers += len(slow)
        slow_means += slow
        workers_total += len(means)
        cvs.append(st.median(job_cvs))
        print(f"{os.path.basename(path)}: CV across workers (median) {st.median(job_cvs):.3f}; "
              f"worker mean slowdowns {' '.join(f'{means[w]:.2f}' for w in sorted(means))}")
    print()
    print(f"noise_cv            = {st.median(cvs):.3f}")
    print(f"persistent_fraction = {slow_workers / workers_total:.2f}")
    print(f"persistent_slowdown = {st.mean(slow_means):.2f}" if slow_means else "persistent_slowdown = 1")
    print(f"slow episodes (>= 1.5x): {episodes} in {worker_iterations} worker-iterations, "
          f"mean length {st.mean(episode_lengths) if episode_lengths else 0:.0f} iterations")


if __name__ == "__main__":
    main(sys.argv)
