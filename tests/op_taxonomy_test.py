#!/usr/bin/env python3
"""Op taxonomy check (docs/DESIGN.md, "Op families"): an op's family names the files that hold
its fallback kernel (runtime/kernels/<family>[_topic]_kernels.cc) and its lowering
(compiler/tf2hlo/<family>[_topic]_lowerings.cc). The family is the catalog's, as `tfjit ops`
prints it. The check reads the two registration forms, `registry.Register("Op", ...)` in a
kernel file and `{"Op", Lower...}` in a lowering table, and fails on any op registered in a
file of another family that is not listed below with its reason; it also fails on a listed
exception that no longer occurs, so the list only shrinks.

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
    ("runtime/kernels/array_shape_kernels.cc", "PreventGradient"): "an identity; to move",
    ("runtime/kernels/array_kernels.cc", "ZerosLike"): "shares array's fill code",
    ("runtime/kernels/array_kernels.cc", "OnesLike"): "shares array's fill code",
    **{("compiler/tf2hlo/math_elementwise_lowerings.cc", op): "one-line elementwise forms; to move"
       for op in ["Erf", "Xdivy", "Xlogy"]},
    ("compiler/tf2hlo/array_slice_lowerings.cc", "ResourceGather"): "shares GatherV2's lowering",
    **{("compiler/tf2hlo/array_lowerings.cc", op): "shares array's constant/identity lowering"
       for op in ["Const", "Identity", "IdentityN", "StopGradient", "Snapshot",
                  "PreventGradient", "NoOp"]},
    # Ops that arrived with the array_more batch and were never moved.
    **{("runtime/kernels/array_more_kernels.cc", op): "array_more batch; to move"
       for op in ["InTopKV2", "ApproximateEqual", "CumulativeLogsumexp", "Assert",
                  "ControlTrigger", "NthElement"]},
    **{("compiler/tf2hlo/array_more_lowerings.cc", op): "array_more batch; to move"
       for op in ["InTopKV2", "ApproximateEqual", "CumulativeLogsumexp", "Cumsum", "Cumprod",
                  "Assert", "ControlTrigger"]},
    # Conv2DBackpropInput is the forward convolution of the filter reversed: it shares
    # Conv2D's kernel and lowering code.
    ("runtime/kernels/nn_conv_kernels.cc", "Conv2DBackpropInput"): "shares Conv2D's code",
    ("compiler/tf2hlo/nn_conv_lowerings.cc", "Conv2DBackpropInput"): "shares Conv2D's code",
    # ConcatOffset is an array op that only concat gradients read.
    ("runtime/kernels/gradients_kernels.cc", "ConcatOffset"): "only concat gradients read it",
    ("compiler/tf2hlo/gradients_lowerings.cc", "ConcatOffset"): "only concat gradients read it",
    # Pooling kernels share the image file's window loops.
    ("runtime/kernels/image_kernels.cc", "MaxPool"): "shares the window loops; to move",
    ("runtime/kernels/image_kernels.cc", "AvgPool"): "shares the window loops; to move",
    ("runtime/kernels/image_kernels.cc", "GatherNd"): "shares crop indexing; to move",
    ("runtime/kernels/scatter_segment_kernels.cc", "RaggedRange"): "segment-row code; to move",
    # A loop condition's comparisons lower with the control-flow helpers that fold them.
    **{("compiler/tf2hlo/control_flow_lowerings.cc", op): "loop-condition comparisons"
       for op in ["Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
                  "LogicalAnd", "LogicalOr", "LogicalNot"]},
    ("compiler/tf2hlo/math_lowerings.cc", "Relu"): "elementwise max with 0; to move",
    ("compiler/tf2hlo/math_lowerings.cc", "Relu6"): "elementwise clamp; to move",
    **{("compiler/tf2hlo/nn_lowerings.cc", op): "dot lowering shared with dense layers; to move"
       for op in ["MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "Einsum"]},
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
