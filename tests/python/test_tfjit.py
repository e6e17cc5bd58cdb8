"""The tfjit Python module against independent references.

Run by ctest (python_test) with Debian's /usr/bin/python3 and PYTHONPATH set to the build's
python/ folder; TFJIT_CLI, TFJIT_SOURCE_DIR and TFJIT_MODEL_CACHE come from the environment.
"""
import os
import subprocess
import tempfile
import unittest

import numpy as np
import tfjit

SRC = os.environ["TFJIT_SOURCE_DIR"]
CLI = os.environ["TFJIT_CLI"]
MATMUL = os.path.join(SRC, "tests", "tf", "graphs", "matmul.pbtxt")


def random_feeds(model, seed):
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal([d if d >= 0 else 1 for d in shape]).astype(dtype)
            for name, dtype, shape in model.inputs}


class ModuleTest(unittest.TestCase):
    def test_matmul_graph_matches_numpy(self):
        """tests/tf/graphs/matmul.pbtxt: four transposed matmuls, BiasAdd NHWC and NCHW."""
        for jit in ("none", "auto"):
            model = tfjit.load(MATMUL, jit=jit)
            f = random_feeds(model, 7)
            out = model.run(f)
            tab = f["at"].T @ f["bt"].T
            expected = f["a"] @ f["b"] + f["at"].T @ f["b"] + f["a"] @ f["bt"].T + tab + f["bias"]
            np.testing.assert_allclose(out["mm/out"], expected, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(out["img/bias"],
                                       f["img"] + f["bias"][None, :, None, None], rtol=1e-6)
            self.assertEqual(out["mm/out"].dtype, np.float32)

    def test_inputs_outputs_and_explain(self):
        model = tfjit.load(MATMUL)
        self.assertEqual([i[0] for i in model.inputs], ["a", "b", "at", "bt", "bias", "img"])
        self.assertEqual(model.inputs[0][1], np.dtype("float32"))
        self.assertEqual(model.inputs[0][2], [5, 7])
        self.assertEqual(sorted(model.outputs), ["img/bias", "mm/out"])
        text = model.explain()
        self.assertIn("cluster_0", text)
        self.assertIn("MatMul", text)

    def test_errors_are_tfjit_errors_with_codes(self):
        model = tfjit.load(MATMUL)
        feeds = random_feeds(model, 1)
        feeds["a"] = feeds["a"].astype(np.int64)
        with self.assertRaises(tfjit.Error) as caught:
            model.run(feeds)
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")
        self.assertIn("feed 'a': expected dtype float32", str(caught.exception))
        with self.assertRaises(tfjit.Error) as caught:
            tfjit.load(os.path.join(SRC, "no_such_model.pb"))
        self.assertEqual(caught.exception.code, "NOT_FOUND")
        with self.assertRaises(tfjit.Error) as caught:
            tfjit.load(MATMUL, jit="sometimes")
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")

    def test_non_contiguous_feeds(self):
        model = tfjit.load(MATMUL)
        feeds = random_feeds(model, 3)
        strided = np.asfortranarray(feeds["a"])
        out_c = model.run(feeds)["mm/out"]
        feeds["a"] = strided
        np.testing.assert_array_equal(model.run(feeds)["mm/out"], out_c)

    def test_corpus_model_matches_the_cli(self):
        """A real model from npm (nsfwjs mobilenet_v2_mid): the module and the CLI agree."""
        cache = os.environ.get("TFJIT_MODEL_CACHE", "")
        path = os.path.join(cache, "models", "nsfwjs", "materialized", "mobilenet_v2_mid",
                            "model.json")
        if not os.path.exists(path):
            self.skipTest(f"{path} is not in the model cache "
                          "(tests/models/fetch_models.sh fills it)")
        model = tfjit.load(path)
        feeds = {name: np.random.default_rng(5).random(
            [d if d >= 0 else 1 for d in shape]).astype(dtype)
            for name, dtype, shape in model.inputs}
        out = model.run(feeds)
        with tempfile.TemporaryDirectory() as tmp:
            args = [CLI, "run", path, "--output-dir", tmp]
            for name, value in feeds.items():
                file = os.path.join(tmp, name.replace("/", "_").replace(":", "_") + ".in.npy")
                np.save(file, value)
                args += ["--input", f"{name}={file}"]
            subprocess.run(args, check=True, capture_output=True)
            for name, value in out.items():
                cli = np.load(os.path.join(tmp, name.replace("/", "_").replace(":", "_") + ".npy"))
                np.testing.assert_array_equal(value, cli)


if __name__ == "__main__":
    unittest.main()
