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

    def test_threads_share_one_model(self):
        """8 Python threads run one compiled model at once (tfjit releases the GIL while it
        computes): every result matches NumPy for its own feeds."""
        import threading
        model = tfjit.load(MATMUL, jit="auto")
        model.run(random_feeds(model, 1))  # compiles once, before the threads start
        errors = []

        def worker(k):
            try:
                for i in range(20):
                    f = random_feeds(model, 100 * k + i)
                    out = model.run(f)
                    expected = (f["a"] @ f["b"] + f["at"].T @ f["b"] + f["a"] @ f["bt"].T +
                                f["at"].T @ f["bt"].T + f["bias"])
                    np.testing.assert_allclose(out["mm/out"], expected, rtol=1e-5, atol=1e-5)
            except Exception as e:  # reported on the main thread
                errors.append(f"thread {k}: {e!r}")

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        self.assertFalse(any(t.is_alive() for t in threads), "a thread did not finish")
        self.assertEqual(errors, [])

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

    def test_batch_sizes_share_one_executable(self):
        """shapes='symbolic' (and the default 'auto'): tests/tf/graphs/dynamic_batch.pbtxt, x [-1, 4]
        reshaped to [batch, 2, 2] through Shape -> StridedSlice -> Pack, y = sum(relu(r * w), -1)
        with w = [1, -2], checked against NumPy at every batch size, on the CPU and the
        interpreter; a bad shapes mode is INVALID_ARGUMENT."""
        path = os.path.join(SRC, "tests", "tf", "graphs", "dynamic_batch.pbtxt")
        for shapes in ("symbolic", "auto", "static"):
            for backend in ("cpu", "interpreter"):
                model = tfjit.load(path, shapes=shapes, backend=backend)
                for batch in (1, 3, 2, 8, 5):
                    x = np.random.default_rng(batch).standard_normal((batch, 4)).astype(np.float32)
                    y = model.run({"x": x}, fetches=["y"])["y"]
                    r = x.reshape(batch, 2, 2) * np.array([1, -2], np.float32)
                    np.testing.assert_allclose(y, np.maximum(r, 0).sum(-1), rtol=1e-6, atol=1e-6)
        with self.assertRaises(tfjit.Error) as caught:
            tfjit.load(path, shapes="sometimes")
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")
        self.assertIn("static, auto or symbolic", str(caught.exception))

    def test_batch_buckets(self):
        """batch_buckets=[4, 8]: batch sizes 3, 5 and 7 run padded to a bucket and 12 on the
        symbolic executable, each against NumPy; a bucket below 2 is INVALID_ARGUMENT."""
        path = os.path.join(SRC, "tests", "tf", "graphs", "dynamic_batch.pbtxt")
        model = tfjit.load(path, batch_buckets=[8, 4])
        for batch in (1, 3, 5, 7, 12):
            x = np.random.default_rng(batch).standard_normal((batch, 4)).astype(np.float32)
            y = model.run({"x": x}, fetches=["y"])["y"]
            self.assertEqual(y.shape, (batch, 2))
            r = x.reshape(batch, 2, 2) * np.array([1, -2], np.float32)
            np.testing.assert_allclose(y, np.maximum(r, 0).sum(-1), rtol=1e-6, atol=1e-6)
        with self.assertRaises(tfjit.Error) as caught:
            tfjit.load(path, batch_buckets=[1, 4])
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")
        self.assertIn("batch_buckets", str(caught.exception))

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


TRAINING = os.path.normpath(os.path.join(SRC, "..", "shared", "data", "training"))


class TrainingTest(unittest.TestCase):
    """TF-written training graphs through the module: variables persist across run() calls."""

    def setUp(self):
        rng = np.random.default_rng(11)
        self.x = rng.random(100, dtype=np.float32)
        self.y = (0.1 * self.x + 0.3).astype(np.float32)

    def test_tf1_train_op_as_a_target(self):
        """tf1_regression: GradientDescent(0.5) on an exact linear fit converges to w=0.1,
        b=0.3; each step is run as a target, the loss fetched alongside."""
        # With autofix the reference-variable updates compile too (the step is one cluster),
        # in auto and all; without it --jit all refuses them, as TF's XLA does.
        for jit, autofix in (("none", False), ("auto", False), ("auto", True), ("all", True)):
            model = tfjit.load(os.path.join(TRAINING, "tf1_regression", "model.pb"), jit=jit,
                               autofix=autofix)
            model.run({}, fetches=[], targets=["init"])
            losses = []
            for _ in range(200):
                out = model.run({"x": self.x, "y": self.y}, fetches=["Mean"], targets=["train"])
                losses.append(float(out["Mean"]))
            wb = model.run({}, fetches=["w", "b"])
            self.assertAlmostEqual(float(wb["w"][0]), 0.1, delta=1e-3)
            self.assertAlmostEqual(float(wb["b"][0]), 0.3, delta=1e-3)
            self.assertLess(losses[-1], 1e-8)
            self.assertLess(losses[-1], losses[0])
        model = tfjit.load(os.path.join(TRAINING, "tf1_regression", "model.pb"), jit="all")
        with self.assertRaisesRegex(Exception, "Detected unsupported operations"):
            model.run({}, fetches=[], targets=["init"])

    def test_tf2_train_signature_and_save_variables(self):
        """tf2_regression_savedmodel: train, write the variables back, reload the copy."""
        src = os.path.join(TRAINING, "tf2_regression_savedmodel")
        model = tfjit.load(src, signature="train")
        for _ in range(100):
            loss = model.run({"x": self.x, "y": self.y})["loss"]
        self.assertLess(float(loss), 1e-6)
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "variables"))
            with open(os.path.join(src, "saved_model.pb"), "rb") as f_in, \
                    open(os.path.join(tmp, "saved_model.pb"), "wb") as f_out:
                f_out.write(f_in.read())
            model.save_variables(os.path.join(tmp, "variables", "variables"))
            w = tfjit.load(tmp, signature="w").run({})["output"]
            b = tfjit.load(tmp, signature="b").run({})["output"]
            self.assertAlmostEqual(float(w[0]), 0.1, delta=2e-3)
            self.assertAlmostEqual(float(b[0]), 0.3, delta=2e-3)
        with self.assertRaises(tfjit.Error) as caught:
            tfjit.load(MATMUL).save_variables("/tmp/unused")
        self.assertEqual(caught.exception.code, "FAILED_PRECONDITION")

if __name__ == "__main__":
    unittest.main()
