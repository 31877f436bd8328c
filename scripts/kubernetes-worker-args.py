"""Prints, as a JSON list, the `hands worker` arguments of the worker Job in a manifest file
(deploy/kubernetes/worker.yaml): the container's args with each $(VAR) expanded as Kubernetes
expands it, from the ConfigMap and Secret of the same file (a fieldRef becomes a placeholder).
Run with the deploy venv's python (PyYAML): python kubernetes-worker-args.py worker.yaml"""

import json
import re
import sys

import yaml


def main(path: str) -> None:
    docs = [d for d in yaml.safe_load_all(open(path, encoding="utf-8")) if d]
    maps = {("ConfigMap", d["metadata"]["name"]): d.get("data", {}) for d in docs
            if d["kind"] == "ConfigMap"}
    maps.update({("Secret", d["metadata"]["name"]): d.get("stringData", {}) for d in docs
                 if d["kind"] == "Secret"})
    jobs = [d for d in docs if d["kind"] == "Job"]
    if len(jobs) != 1:
        sys.exit(f"{path}: expected one Job, found {len(jobs)}")
    containers = jobs[0]["spec"]["template"]["spec"]["containers"]
    worker = next(c for c in containers if c["name"] == "worker")
    env = {}
    for var in worker.get("env", []):
        if "value" in var:
            env[var["name"]] = var["value"]
            continue
        source = var["valueFrom"]
        if "configMapKeyRef" in source:
            ref = source["configMapKeyRef"]
            env[var["name"]] = maps[("ConfigMap", ref["name"])][ref["key"]]
        elif "secretKeyRef" in source:
            ref = source["secretKeyRef"]
            env[var["name"]] = maps[("Secret", ref["name"])][ref["key"]]
        else:
            env[var["name"]] = f"placeholder-{var['name'].lower()}"

    def expand(arg: str) -> str:
        return re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), arg)

    print(json.dumps([expand(a) for a in worker.get("command", []) + worker.get("args", [])]))


if __name__ == "__main__":
    main(sys.argv[1])
