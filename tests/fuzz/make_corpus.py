#!/usr/bin/env python3
"""(Re)writes the seed corpora tests/fuzz/corpus/<target>/ from the repository's test files.

Seeds are small copies (the whole corpus stays well under 2 MB) so that the replay tests
(ctest fuzz_replay_<target>) run them in every build. scripts/fuzz.sh copies them, and the
regression inputs, into build-fuzz/corpus/<target>/ before fuzzing.
Run from anywhere: python3 tests/fuzz/make_corpus.py [--tfjs DIR...]
  --tfjs DIR  TF.js model folders (model.json + shards) to add as tfjs_model seeds, e.g. the
              ones tfjs_model_test writes to /tmp/tfjs_*.
"""
import glob
import os
import shutil
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
SEP = b"\n#tfjit-fuzz-file#\n"  # fuzz_util.h kFileSeparator


def container(files):
    return SEP.join(name.encode() + b"\n" + data for name, data in files)


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def graphs():
    paths = sorted(glob.glob(os.path.join(ROOT, "tests", "**", "*.pbtxt"), recursive=True))
    return [p for p in paths if "/fuzz/" not in p and os.path.getsize(p) <= 16384]


def seed_graphdefs():
    for p in graphs():
        rel = os.path.relpath(p, os.path.join(ROOT, "tests")).replace("/", "_")
        text = read(p)
        put("graphdef_text", rel, text)
        put("pipeline", rel, text)
        enc = subprocess.run(
            ["protoc", "--encode=tensorflow.GraphDef", "-I", ROOT,
             os.path.join(ROOT, "frontend", "proto", "graph.proto")],
            input=text, capture_output=True)
        if enc.returncode == 0:
            put("graphdef_binary", rel.replace(".pbtxt", ".pb"), enc.stdout)


def seed_saved_models():
    for d in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "savedmodels", "*", "*"))):
        files = []
        for root, _, names in os.walk(d):
            for n in sorted(names):
                full = os.path.join(root, n)
                files.append((os.path.relpath(full, d), read(full)))
        # saved_model.pb first: the one the loader needs most.
        files.sort(key=lambda f: (f[0] != "saved_model.pb", f[0]))
        put("saved_model", os.path.basename(os.path.dirname(d)), container(files))


def seed_tfjs(dirs):
    for d in dirs:
        if not os.path.exists(os.path.join(d, "model.json")):
            continue
        files = [("model.json", read(os.path.join(d, "model.json")))]
        for n in sorted(os.listdir(d)):
            if n != "model.json":
                files.append((n, read(os.path.join(d, n))))
        put("tfjs_model", os.path.basename(d.rstrip("/")), container(files))


def npy(descr, shape, data, major=1):
    shape_text = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    width = 2 if major == 1 else 4
    total = 6 + 2 + width + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    length = struct.pack("<H" if major == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header.encode() + data


def seed_npy():
    put("npy", "f4_2x3.npy", npy("<f4", [2, 3], struct.pack("<6f", 1, -2, 0.5, 3, 4, 5)))
    put("npy", "i8_vec.npy", npy("<i8", [3], struct.pack("<3q", 1, -1, 1 << 40)))
    put("npy", "b1_scalar.npy", npy("|b1", [], b"\x01"))
    put("npy", "u1_empty.npy", npy("|u1", [0, 4], b""))
    put("npy", "f2_v2.npy", npy("<f2", [2], struct.pack("<2H", 0x3C00, 0xC000), major=2))
    put("npy", "f8_v3.npy", npy("<f8", [1, 1], struct.pack("<d", 2.5), major=3))


def seed_hlo():
    for p in sorted(glob.glob(os.path.join(ROOT, "tests", "hlo", "**", "*.hlo"), recursive=True)):
        if os.path.getsize(p) <= 16384:
            rel = os.path.relpath(p, os.path.join(ROOT, "tests", "hlo")).replace("/", "_")
            # not ".hlo": corpus_roundtrip_test parses every .hlo file of the tree as a valid module
            put("hlo_text", rel + ".txt", read(p))


def main():
    tfjs = []
    args = sys.argv[1:]
    while args:
        if args[0] == "--tfjs" and len(args) > 1:
            tfjs.append(args[1])
            args = args[2:]
        else:
            sys.exit(__doc__)
    for t in ["graphdef_text", "graphdef_binary", "pipeline", "saved_model", "npy", "hlo_text"]:
        shutil.rmtree(os.path.join(CORPUS, t), ignore_errors=True)
    if tfjs:
        shutil.rmtree(os.path.join(CORPUS, "tfjs_model"), ignore_errors=True)
    seed_graphdefs()
    seed_saved_models()
    seed_tfjs(tfjs)
    seed_npy()
    seed_hlo()


if __name__ == "__main__":
    main()
