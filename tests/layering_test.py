#!/usr/bin/env python3
"""The dependency direction of docs/DESIGN.md ("Layers"), checked on every project #include.

Each source file's folder gives the project folders it may include from; an #include of a
project header from any other folder is a violation, printed with the file, line and the rule
it breaks. Exit 0 when there is none.

    tests/layering_test.py [SOURCE_DIR]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), ".."))

# The project's top-level include roots: a quoted include starting with one of these is ours.
PROJECT = ("core/", "frontend/", "compiler/", "backends/", "runtime/", "examples/", "tfjit/",
           "tests/", "bench/", "python/", "tools/")

LOWER_IR = ["core/", "tfjit/", "compiler/hlo/", "compiler/evaluator/", "compiler/passes/"]

# (folder prefix of the including file, allowed include prefixes, the rule's words), the
# first matching folder wins. "tfjit/" is include/tfjit, the public API.
RULES = [
    ("include/tfjit/", ["tfjit/"], "the public API includes only itself"),
    ("core/", ["core/", "tfjit/dtype.h", "tfjit/tensor.h", "tfjit/status.h",
               "tfjit/cancellation.h"],
     "core/ sees only core/ and the public value types it implements (Tensor, DType, Status, "
     "CancellationToken)"),
    ("frontend/", ["core/", "frontend/", "tfjit/dtype.h", "tfjit/tensor.h", "tfjit/status.h"],
     "frontend/ depends on core/ only"),
    ("compiler/hlo/", LOWER_IR, "hlo/, evaluator/ and passes/ see only core/ and each other"),
    ("compiler/evaluator/", LOWER_IR, "hlo/, evaluator/ and passes/ see only core/ and each other"),
    ("compiler/passes/", LOWER_IR, "hlo/, evaluator/ and passes/ see only core/ and each other"),
    ("compiler/rules/", ["core/", "tfjit/dtype.h", "tfjit/tensor.h", "tfjit/status.h",
                         "frontend/", "compiler/rules/"],
     "the known-issue rules sit below tf2hlo and cluster: they see frontend/ and core/ only"),
    ("compiler/", LOWER_IR + ["frontend/", "compiler/rules/", "compiler/tf2hlo/",
                              "compiler/cluster/"],
     "nothing in compiler/ includes runtime/ or backends/"),
    ("backends/", LOWER_IR + ["backends/"],
     "backends/ never include frontend/, compiler/tf2hlo/, compiler/cluster/ or runtime/"),
    ("runtime/", ["core/", "tfjit/", "frontend/", "compiler/", "backends/", "runtime/"],
     "runtime/ depends on the layers below it, never on examples/, bench/ or tests/"),
    ("serving/", ["tfjit/", "core/", "frontend/proto/", "frontend/tensor_proto.h", "serving/"],
     "tfjit serve runs models through include/tfjit; it reads SavedModel signatures and "
     "TensorProtos with the frontend's protos (DESIGN.md, serving/ row)"),
    ("examples/embed/", ["tfjit/"], "the embedding example uses include/tfjit alone"),
    ("examples/", ["tfjit/", "core/", "frontend/proto/", "frontend/tensor_proto.h", "runtime/io/",
                   "serving/server.h", "examples/"],
     "the CLI, the demo-model generator and examples/train use include/tfjit, core/, the "
     "frontend's protos and TensorProto, runtime/io and the server's entry point (DESIGN.md, "
     "examples/ row)"),
    ("python/", ["tfjit/", "core/", "runtime/io/", "examples/", "python/"],
     "the Python module wraps the public API (and the CLI's helpers)"),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def rule_for(rel):
    for folder, allowed, words in RULES:
        if rel.startswith(folder):
            return allowed, words
    return None, None


def main():
    violations = []
    checked = 0
    for top in ("include", "core", "frontend", "compiler", "backends", "runtime", "serving",
                "examples", "python"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith((".h", ".cc", ".inc")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT)
                allowed, words = rule_for(rel)
                if allowed is None:
                    continue
                checked += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        if not inc.startswith(PROJECT):
                            continue  # a third-party header, or a generated one of a library
                        if any(inc.startswith(a) for a in allowed):
                            continue
                        violations.append(f"{rel}:{number}: includes \"{inc}\": {words}")
    for v in violations:
        print(v)
    print(f"layering: {checked} files checked, {len(violations)} violation(s) "
          f"(rules: docs/DESIGN.md, Layers)")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
