#!/usr/bin/env python3
"""Op taxonomy check (docs/DESIGN.md, "Op families"): an op's family names the files that hold
its fallback kernel (runtime/kernels/<family>[_topic]_kernels.cc) and its lowering
(compiler/tf2hlo/<family>[_topic]_lowerings.cc). The family is the catalog's, as `tfjit ops`
prints it. The check reads the two registration forms, `registry.Register("Op", ...)` in a
kernel file and `{"Op", Lower...}` in a lowering table, and fails on any op registered in a
file of another family that is not listed below with its reason; it also fails on a listed
exception that no longer occurs, so the list only shrinks. The differential-case files
(tests/tf/op_cases_<family>[_topic].cc) must be named after a family too.

usage: op_taxonomy_test.py SOURCE_DIR TFJIT_BINARY
"""
import glob
import os
import re
import subprocess
import sys

# Files whose registrations may belong to any family: their topic cuts across families.
CROSS_FAMILY_FILES = {
    # Complex-valued forms of ops of every family (complex values as (real, imag) pairs,
    # docs/DESIGN.md): one file, so no other lowering sees such a value.
    "compiler/tf2hlo/math_complex_lowerings.cc":
        "complex-valued forms of ops of every family",
    "compiler/tf2hlo/math_complex_linear_lowerings.cc":
        "complex-valued forms of the linear ops of every family",
}

# (file, op): registered outside its family's files, with the reason it stays.
EXCEPTIONS = {
    # The graph family's pass-through ops share the array family's copy and reshape code.
    **{("runtime/kernels/array_kernels.cc", op): "shares array's copy/reshape kernels"
       for op in ["Const", "Placeholder", "Identity", "StopGradient", "Snapshot",
                  "PlaceholderWithDefault", "IdentityN", "NoOp"]},
    ("runtime/kernels/array_kernels.cc", "ZerosLike"): "shares array's fill code",
    ("runtime/kernels/array_kernels.cc", "OnesLike"): "shares array's fill code",
    ("compiler/tf2hlo/array_slice_lowerings.cc", "ResourceGather"): "shares GatherV2's lowering",
    **{("compiler/tf2hlo/array_lowerings.cc", op): "shares array's constant/identity lowering"
       for op in ["Const", "Identity", "IdentityN", "StopGradient", "Snapshot",
                  "PreventGradient", "NoOp"]},
    # ControlTrigger's kernel does nothing; the control_flow family has no kernel file, since
    # the executor runs its other ops itself.
    ("runtime/kernels/array_more_kernels.cc", "ControlTrigger"):
        "the control_flow family has no kernel file (the executor runs its other ops)",
    # Conv2DBackpropInput is the forward convolution of the filter reversed: it shares
    # Conv2D's kernel and lowering code.
    ("runtime/kernels/nn_conv_kernels.cc", "Conv2DBackpropInput"): "shares Conv2D's code",
    ("compiler/tf2hlo/nn_conv_lowerings.cc", "Conv2DBackpropInput"): "shares Conv2D's code",
    # ConcatOffset is an array op that only concat gradients read.
    ("runtime/kernels/gradients_kernels.cc", "ConcatOffset"): "only concat gradients read it",
    ("compiler/tf2hlo/gradients_lowerings.cc", "ConcatOffset"): "only concat gradients read it",
    # A loop condition's comparisons lower with the control-flow helpers that fold them.
    **{("compiler/tf2hlo/control_flow_lowerings.cc", op): "loop-condition comparisons"
       for op in ["Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
                  "LogicalAnd", "LogicalOr", "LogicalNot"]},
}

# Differential-case files (tests/tf/op_cases_<family>[_topic].cc) whose cases span families.
CROSS_FAMILY_CASE_FILES = {
    "tests/tf/op_cases.cc": "the first cases and the helpers every case file shares",
    "tests/tf/op_cases_basic_more.cc": "cases for basic ops of several families that had none",
}

PATTERNS = [
    ("runtime/kernels/*.cc", re.compile(r'registry\.Register\(\s*"([A-Za-z0-9_]+)"')),
    ("compiler/tf2hlo/*.cc", re.compile(r'\{\s*"([A-Z_][A-Za-z0-9_]*)",\s*Lower')),
]


def families(binary):
    out = subprocess.run([binary, "ops"], capture_output=True, text=True, check=True).stdout
    result = {}
    for line in out.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 2:
            result[parts[0]] = parts[1]
    return result


def in_family(path, family):
    base = os.path.basename(path)
    return base.startswith(family + "_") or base.startswith(family + ".")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    root, binary = sys.argv[1], sys.argv[2]
    family_of = families(binary)
    if len(family_of) < 100:
        print(f"op_taxonomy_test: `{binary} ops` listed only {len(family_of)} ops", file=sys.stderr)
        return 1
    wrong, seen, checked = [], set(), 0
    for pattern, regex in PATTERNS:
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as f:
                ops = regex.findall(f.read())
            for op in ops:
                family = family_of.get(op)
                if family is None:
                    continue  # a helper name or an op the catalog does not list
                checked += 1
                if in_family(rel, family) or rel in CROSS_FAMILY_FILES:
                    continue
                if (rel, op) in EXCEPTIONS:
                    seen.add((rel, op))
                    continue
                wrong.append(f"{rel}: {op} is family '{family}' (move it to a {family}_* file, "
                             f"change its catalog family, or list it in {__file__} with why)")
    families_known = set(family_of.values())
    for path in sorted(glob.glob(os.path.join(root, "tests/tf/op_cases*.cc"))):
        rel = os.path.relpath(path, root)
        if rel in CROSS_FAMILY_CASE_FILES:
            continue
        name = os.path.basename(rel)[len("op_cases_"):]
        if not any(name.startswith(f + "_") or name.startswith(f + ".") for f in families_known):
            wrong.append(f"{rel}: a case file is named op_cases_<family>[_topic].cc (families: "
                         f"{', '.join(sorted(families_known))})")
    stale = sorted(set(EXCEPTIONS) - seen)
    for line in wrong:
        print("op_taxonomy_test:", line, file=sys.stderr)
    for rel, op in stale:
        print(f"op_taxonomy_test: listed exception ({rel}, {op}) no longer occurs: remove it",
              file=sys.stderr)
    if wrong or stale:
        return 1
    print(f"op_taxonomy_test: {checked} registrations in their family's files "
          f"({len(EXCEPTIONS)} listed exceptions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
