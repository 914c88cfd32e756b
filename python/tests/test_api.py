"""Every call of the Python API on the shipped examples."""
import json
import os
import threading
import time

import numpy as np
import pytest

import neuroc
from conftest import DATA, model_path


def test_library_and_backends():
    assert neuroc.version()[0] == neuroc.__version__
    names = {b["name"]: b for b in neuroc.backends()}
    assert names["cpu"]["available"] and names["cpu-fast"]["available"]
    for b in names.values():
        assert b["available"] or b["reason"]  # says why not


def test_model_load_layers_info_run(cnn, test_xy):
    x, _ = test_xy
    assert [v.shape for v in cnn.inputs] == [(-1, 1, 28, 28)]
    layers = cnn.layers
    assert layers[0].op == "Conv" and layers[0].output_shape == (1, 16, 28, 28)
    info = cnn.info()
    assert info["params"] == sum(L.params for L in layers) > 0 and info["macs"] > 0
    # the ANN as PyTorch ran it (examples/data/cnn_logits.npy), in chunks of any size
    ref = np.load(os.path.join(DATA, "cnn_logits.npy"))
    y = cnn.run(x)
    assert y.shape == ref.shape and np.abs(y - ref).max() < 1e-4
    assert np.allclose(cnn.run(x, batch=100), y, atol=1e-5)  # BLAS sums in another order per batch size


def test_load_from_bytes(test_xy):
    with open(model_path("mlp"), "rb") as f:
        m = neuroc.load(f.read(), name="mlp")
    x = test_xy[0][:16]
    assert np.array_equal(m.run(x), neuroc.load(model_path("mlp")).run(x))
    # [N, 28, 28] uint8 is scaled and reshaped as the program does it
    u8 = (x[:, 0] * 255).round().astype(np.uint8)
    assert np.array_equal(m.run(u8), m.run(u8.astype(np.float32) * np.float32(1 / 255).astype(np.float32)))


def test_convert_sources_agree(cnn, test_xy, tmp_path):
    """A Model, an ONNX path, ONNX bytes and batches of (x, y) give the same network."""
    x, y = test_xy
    files = []
    with open(model_path("cnn"), "rb") as f:
        onnx = f.read()
    batches = ((x[i:i + 50], y[i:i + 50]) for i in range(0, len(x), 50))
    for i, (model, calib) in enumerate([(cnn, x), (model_path("cnn"), x), (onnx, x), (cnn, batches)]):
        p = tmp_path / f"{i}.nir"
        neuroc.convert(model, calib=calib, timesteps=8, threshold="p99.9", per_channel=True, progress=False).save(p)
        files.append(p.read_bytes())
    assert all(f == files[0] for f in files)


def test_run(cnn_snn, test_xy):
    x, y = test_xy
    out = cnn_snn.run(x, timesteps=8)
    assert out.shape == (256, 10) and out.dtype == np.float32
    assert (out.argmax(1) == y).mean() > 0.6
    assert np.array_equal(cnn_snn.run(x, timesteps=8, batch=100), out)  # batching does not change results
    assert np.array_equal(cnn_snn.run(x, timesteps=8, backend="cpu"), out)  # the reference backend agrees
    steps = cnn_snn.run(x, timesteps=8, per_step=True, batch=64)
    assert steps.shape == (8, 256, 10)
    assert np.allclose(steps.sum(0), out, atol=1e-4)
    # a time series (T, N, ...) of the same frame is the static input
    series = np.broadcast_to(x[:10], (8,) + x[:10].shape).copy()
    assert np.allclose(cnn_snn.run(series), out[:10], atol=1e-4)
    name = next(L.name for L in cnn_snn.layers if L.kind == "SignedIF")  # the default neuron
    out2, traces = cnn_snn.run(x[:20], timesteps=4, record=[name], batch=8)
    # spikes a step: signed, in bursts of up to 2 (the default)
    assert traces[name].shape[:2] == (4, 20) and set(np.unique(traces[name])) <= {-2.0, -1.0, 0.0, 1.0, 2.0}


def test_profile(cnn_snn, test_xy):
    x, _ = test_xy
    out, times = cnn_snn.run(x[:40], timesteps=4, batch=16, profile=True)
    assert np.array_equal(out, cnn_snn.run(x[:40], timesteps=4, batch=16))  # profiling changes no result
    assert set(times) == {L.name for L in cnn_snn.layers}
    convs = [L.name for L in cnn_snn.layers if L.kind == "Conv2d"]
    assert all(v >= 0 for v in times.values()) and sum(times[n] for n in convs) > 0
    with pytest.raises(neuroc.Error):  # cuda does not time layers (and is absent without a GPU)
        cnn_snn.run(x[:4], timesteps=2, backend="cuda", profile=True)


def test_evaluate(cnn_snn, test_xy):
    x, y = test_xy
    r = cnn_snn.evaluate(x, y, timesteps=16, progress=False)
    assert sorted(r.accuracy) == list(range(1, 17)) and r.samples == 256
    assert all(0 <= a <= 100 for a in r.accuracy.values())
    assert r.ann_accuracy is not None and r.ann_accuracy > 80
    ifs = [L.name for L in cnn_snn.layers if L.kind in ("IF", "SignedIF")]
    assert sorted(r.spike_rates) == sorted(ifs) and all(0 < v < 1 for v in r.spike_rates.values())
    assert r.synops > 0 and r.energy["snn_joules"] > 0 and r.energy["ann_joules"] > 0 and r.energy["source"]
    doc = json.loads(r.to_json())
    assert isinstance(doc, dict) and str(round(r.accuracy[16] / 100, 4))[:4] in r.to_json()
    # the cost of stopping after t steps: the JSON's per_t, growing with t, its last entry the run's total
    assert r.per_t["t"] == doc["accuracy"]["t"] == list(range(1, 17))
    for key in ("synaptic_adds", "synaptic_macs", "energy_j"):
        assert r.per_t[key] == pytest.approx(doc["per_t"][key], rel=1e-8)
        assert all(a <= b for a, b in zip(r.per_t[key], r.per_t[key][1:]))
    assert r.per_t["energy_j"][-1] == pytest.approx(r.energy["snn_joules"])
    assert r.per_t["synaptic_adds"][-1] + r.per_t["synaptic_macs"][-1] == pytest.approx(r.synops)
    assert r.per_t["synaptic_macs"][0] > 0  # the first layer reads the analog image
    assert doc["energy"]["ann_j"] == pytest.approx(r.energy["ann_joules"])
    # the run's own accuracy at t equals the readout's argmax summed over t steps
    out = cnn_snn.run(x, timesteps=16)
    assert r.accuracy[16] == pytest.approx(100.0 * (out.argmax(1) == y).mean())
    plot = r.plot()
    if isinstance(plot, str):
        assert plot.lstrip().startswith("<") and "<svg" in plot
    assert "<svg" in r.svg()


def test_progress_callback(cnn_snn, test_xy):
    x, y = test_xy
    seen = []
    cnn_snn.evaluate(x, y, timesteps=2, progress=lambda what, done, total: seen.append((what, done, total)))
    assert seen and seen[-1][1] == seen[-1][2] == 256


def test_save_load_nir(cnn_snn, test_xy, tmp_path):
    x, _ = test_xy
    p = tmp_path / "cnn.nir"
    cnn_snn.save(p)
    back = neuroc.load_nir(p)
    assert [L.name for L in back.layers] == [L.name for L in cnn_snn.layers]
    assert np.array_equal(back.run(x, timesteps=8), cnn_snn.run(x, timesteps=8))
    assert back.ann is None and back.evaluate(x, test_xy[1], timesteps=2).ann_accuracy is None
    # one file for both audiences: neuroc reads the exact network, other tools the standard graph
    info = neuroc.nir_file_info(p)
    assert info["exact_graph"] and info["loss_known"] and info["neuroc_format"] == 4
    assert info["standard_loss"] == cnn_snn.nir_standard_loss()
    assert "IF neurons are NIR's IF there" in info["standard_loss"]


def test_rate_limit(cnn_snn, test_xy, cnn):
    x, _ = test_xy
    lim = cnn_snn.rate_limit(x)
    assert lim.shape == (len(x), 10)
    # readout/T approaches the limit: closer at T = 128 than at T = 8
    far, near = (np.abs(cnn_snn.run(x, timesteps=T) / T - lim).mean() for T in (8, 128))
    assert near < far and near < 0.05 * np.abs(lim).mean()
    # and the limit is close to the ANN (the clipping at p99.9 is the difference)
    assert (lim.argmax(1) == cnn.run(x).argmax(1)).mean() > 0.9


def test_load_nir_options(tmp_path):
    shared = os.path.join(os.environ.get("NEUROC_SRC", ""), "..", "shared", "nir-samples", "lif_norse.nir")
    if not os.path.exists(shared):
        pytest.skip("../shared/nir-samples is absent (a user's clone)")
    x = np.random.default_rng(0).random((5,) + neuroc.load_nir(shared).input_shape, dtype=np.float32)
    euler = neuroc.load_nir(shared, dt=1e-3).run(x, timesteps=20)
    exact = neuroc.load_nir(shared, dt=1e-3, integration="exact").run(x, timesteps=20)
    assert euler.shape == exact.shape and not np.array_equal(euler, exact)
    with pytest.raises(neuroc.InvalidArgument, match="spike must be one of"):
        neuroc.load_nir(shared, spike="maybe")


def test_finetune(test_xy):
    x, y = test_xy
    snn = neuroc.convert(model_path("mlp"), calib=x, progress=False)
    before = snn.run(x, timesteps=2)
    seen = []
    epochs = snn.finetune(x, y, timesteps=2, epochs=1, lr=1e-3, batch=64, callback=seen.append, progress=False)
    assert len(epochs) == len(seen) == 1 and seen[0]["epoch"] == 1 and seen[0]["samples"] == 256
    assert not np.array_equal(snn.run(x, timesteps=2), before)  # the weights moved
    # a callback returning False stops after that epoch
    stopped = snn.finetune(x, y, timesteps=2, epochs=3, callback=lambda e: False, progress=False)
    assert [e["epoch"] for e in stopped] == [1]


def test_finetune_energy_weight(test_xy):
    """energy_weight adds the spikes' energy to the loss: the same run trains fewer spikes."""
    x, y = test_xy
    adds = {}
    for w in (0.0, 5.0):
        snn = neuroc.convert(model_path("mlp"), calib=x, progress=False)
        snn.finetune(x, y, timesteps=4, epochs=2, lr=1e-3, energy_weight=w, progress=False)
        adds[w] = snn.evaluate(x, y, timesteps=4, backend="cpu").energy["synaptic_adds"]
    assert adds[5.0] < 0.8 * adds[0.0], adds


def test_simulate_loihi(cnn, cnn_snn, test_xy):
    x, y = test_xy
    signed = cnn_snn.simulate_loihi(x[:32], y[:32], timesteps=8)  # the default: signed spikes, on Loihi 2
    assert signed.network["layers"][1]["signed_spikes"] is True
    with pytest.raises(neuroc.UnsupportedError, match="spikes='plain'"):  # Loihi 1 spikes have no sign
        cnn_snn.simulate_loihi(x[:32], y[:32], timesteps=8, target="loihi1")
    plain = neuroc.convert(cnn, calib=x, spikes="plain", progress=False)
    assert plain.report["options"]["spikes"] == "plain" and cnn_snn.report["options"]["spikes"] == "signed"
    assert {L.kind for L in plain.layers} >= {"IF"} and "SignedIF" not in {L.kind for L in plain.layers}
    r = plain.simulate_loihi(x[:32], y[:32], timesteps=8)
    assert sorted(r.accuracy) == list(range(1, 9)) and r.mapping["cores"] > 0
    assert r.cost["energy_j"] > 0 and r.readout().shape[1:] == (32, 10)
    assert json.loads(r.to_json())


def test_arrays_without_copies(test_xy):
    x, _ = test_xy
    t = neuroc.Tensor(x)
    assert t.array is x  # the array itself, wrapped by nc_tensor_wrap
    strided = x[::2]
    assert neuroc.Tensor(strided).array is not strided  # not C-contiguous: copied once
    with pytest.raises(neuroc.InvalidArgument):
        neuroc.Tensor(x.astype(np.float16))


def test_qcfs_finetuning_with_labels(test_xy):
    x, y = test_xy
    snn = neuroc.convert(model_path("cnn_qcfs"), calib=x[:128], labels=y[:128], qcfs_epochs=1, batch=64,
                         progress=False)
    assert snn.report["qcfs_finetune"]["samples"] == 128
    assert any(L["threshold"] != L["threshold_before_finetune"] for L in snn.report["layers"] if L["kind"] == "IF")


def test_gil_released_during_c_calls(cnn_snn, test_xy):
    """Another Python thread keeps running while a long C call works."""
    x, y = test_xy
    span = {}

    def work():
        span["t0"] = time.perf_counter()
        cnn_snn.evaluate(x, y, timesteps=64, progress=False)
        span["t1"] = time.perf_counter()

    ticks = []
    t = threading.Thread(target=work)
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    lo, hi = span["t0"], span["t1"]
    mid = [k for k in ticks if lo + 0.25 * (hi - lo) < k < lo + 0.75 * (hi - lo)]
    assert hi - lo > 0.1 and mid, f"no Python step during the middle half of a {hi - lo:.2f} s C call"


def test_tqdm_bars_when_installed(cnn_snn, test_xy, monkeypatch):
    """progress=None draws tqdm bars when tqdm imports (a stand-in here)."""
    import sys
    import types
    bars = []

    class Bar:
        def __init__(self, total, desc, **kw):
            self.total, self.desc, self.n, self.closed = total, desc, 0, False
            bars.append(self)

        def update(self, k):
            self.n += k

        def close(self):
            self.closed = True
    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=Bar))
    x, y = test_xy
    cnn_snn.evaluate(x, y, timesteps=2)
    assert bars and all(b.closed and b.n == b.total for b in bars)


def test_burst_option(cnn, test_xy):
    """burst=2: up to two signed spikes a step, as `neuroc convert --burst 2`; cpu = cpu-fast."""
    x, _ = test_xy
    snn = neuroc.convert(cnn, calib=x, burst=2, progress=False)
    assert snn.report["options"]["burst"] == 2
    assert np.array_equal(snn.run(x[:32], timesteps=8, backend="cpu"), snn.run(x[:32], timesteps=8))
    with pytest.raises(neuroc.InvalidArgument):
        neuroc.convert(cnn, calib=x, burst=2, spikes="plain", progress=False)


def _write_two_output_nir(path, wa, wb):
    """A plain NIR graph, as another tool writes it: input -> fa -> out_a, input -> fb -> out_b."""
    h5py = pytest.importorskip("h5py")
    s = h5py.string_dtype("utf-8")
    with h5py.File(path, "w") as f:
        f.create_dataset("version", data="1.0.8", dtype=s)
        g = f.create_group("node")
        g.create_dataset("type", data="NIRGraph", dtype=s)
        nodes = g.create_group("nodes")
        def node(name, typ, **fields):
            n = nodes.create_group(name)
            n.create_dataset("type", data=typ, dtype=s)
            for k, v in fields.items():
                n.create_dataset(k, data=v)
        node("input", "Input", shape=np.array([3], np.int64))
        node("fa", "Affine", weight=wa, bias=np.zeros(wa.shape[0], np.float32))
        node("fb", "Affine", weight=wb, bias=np.zeros(wb.shape[0], np.float32))
        node("out_a", "Output", shape=np.array([wa.shape[0]], np.int64))
        node("out_b", "Output", shape=np.array([wb.shape[0]], np.int64))
        g.create_dataset("edges", data=np.array([["input", "fa"], ["input", "fb"], ["fa", "out_a"],
                                                 ["fb", "out_b"]], dtype=object), dtype=s)


def test_several_outputs(tmp_path):
    rng = np.random.default_rng(1)
    wa, wb = rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(4, 3)).astype(np.float32)
    path = str(tmp_path / "two_out.nir")
    _write_two_output_nir(path, wa, wb)
    snn = neuroc.load_nir(path)
    assert snn.outputs == {"out_a": (2,), "out_b": (4,)}
    x = rng.random((5, 3), dtype=np.float32)
    y = snn.run(x, timesteps=3, backend="cpu")
    assert set(y) == {"out_a", "out_b"}
    np.testing.assert_allclose(y["out_a"], 3 * x @ wa.T, rtol=1e-5)
    np.testing.assert_allclose(y["out_b"], 3 * x @ wb.T, rtol=1e-5)
    # written back with both Output nodes, and read again the same
    back = str(tmp_path / "back.nir")
    snn.save(back)
    again = neuroc.load_nir(back)
    assert again.outputs == snn.outputs
    y2 = again.run(x, timesteps=3, backend="cpu")
    assert all(np.array_equal(y[k], y2[k]) for k in y)


def test_operating_point(cnn, test_xy, tmp_path):
    """convert(target_loss=...) chooses T and the options; the network keeps
    T (snn.timesteps, through a .nir) and run/evaluate use it by default."""
    x, y = test_xy
    snn = neuroc.convert(cnn, calib=x, labels=y, target_loss=1.0, target_max_timesteps=6, holdout=128,
                         progress=False)
    op = snn.report["operating_point"]
    assert snn.timesteps == op["timesteps"] and 1 <= op["timesteps"] <= 6
    assert op["holdout_samples"] == 128 and op["loss_against"] == "labels" and len(op["candidates"]) == 9
    assert op["feasible"] and op["loss"] <= 1.0
    res = snn.evaluate(x[128:], y[128:], backend="cpu")  # the held-back rows, at the operating T
    assert res.timesteps == op["timesteps"]
    assert abs(res.ann_accuracy - res.accuracy[res.timesteps] - op["loss"]) < 1e-9
    assert snn.run(x[:4]).shape == (4, 10)
    assert np.array_equal(snn.run(x[:4]), snn.run(x[:4], timesteps=op["timesteps"]))
    snn.save(tmp_path / "op.nir")
    assert neuroc.load_nir(tmp_path / "op.nir").timesteps == op["timesteps"]
    plain = neuroc.convert(cnn, calib=x, progress=False)
    assert plain.timesteps is None and "operating_point" not in plain.report


def test_operating_point_finetune(cnn, test_xy):
    """finetune_epochs with target_loss: after its conversions the search
    fine-tunes at T = 1, 2 (below target_max_timesteps + 1 without a T
    within the target), smallest first, and says so in the report."""
    x, y = test_xy
    snn = neuroc.convert(cnn, calib=x, labels=y, target_loss=0.5, target_max_timesteps=2, holdout=128,
                         burst=1, threshold="p99.9", finetune_epochs=1, progress=False)
    op = snn.report["operating_point"]
    tuned = [c["finetune_timesteps"] for c in op["candidates"] if c["finetune_timesteps"]]
    assert len(op["candidates"]) == 3 + len(tuned) and tuned == [1, 2][:len(tuned)] and tuned
    assert op["finetune_epochs"] in (0, 1) and snn.timesteps == op["timesteps"]


def test_operating_point_finetune_start(cnn, test_xy):
    """Fine-tuning at T starts from the best conversion calibrated for T: one
    spike a step, the mse clip at T (the options the caller left to the
    search); every candidate reports its loss and energy at t = 1, 2, ..."""
    x, y = test_xy
    snn = neuroc.convert(cnn, calib=x, labels=y, target_loss=0.5, target_max_timesteps=2, holdout=128,
                         burst=2, finetune_epochs=1, progress=False)
    cands = snn.report["operating_point"]["candidates"]
    assert all([s["t"] for s in c["steps"]] == [1, 2] for c in cands)
    tuned = [c for c in cands if c["finetune_timesteps"]]
    assert tuned and all(c["burst"] == 2 and c["threshold"] == "mse" for c in tuned), tuned
    for c in cands:
        at = c["timesteps"] or 2
        assert c["steps"][at.bit_length() - 1]["loss"] == c["loss"] or at not in (1, 2)


def test_operating_point_validation(cnn, test_xy):
    """validation=: the search scores on those rows (all of calib calibrates
    and fine-tunes), says so, and warns of nothing; the held-back search
    over the same rows makes the same choice but warns that its fine-tuned
    candidates were scored on calibration rows."""
    x, y = test_xy
    kw = dict(target_loss=0.5, target_max_timesteps=2, burst=1, threshold="p99.9", per_channel=True,
              bias_correction=True, finetune_epochs=1, threads=2, progress=False)
    held = neuroc.convert(cnn, calib=x, labels=y, holdout=128, **kw).report
    val = neuroc.convert(cnn, calib=x[:128], labels=y[:128], validation=x[128:], validation_labels=y[128:],
                         **kw).report
    a, b = held["operating_point"], val["operating_point"]
    assert b["scored_on"] == "validation samples" and a["scored_on"] == "held-back calibration samples"
    assert b["holdout_samples"] == 128 and b["calibration_samples"] == 128
    assert (b["timesteps"], b["loss"], b["energy_ratio"]) == (a["timesteps"], a["loss"], a["energy_ratio"])
    assert any("scored on held-back calibration samples" in w for w in held["warnings"])
    assert not any("scored on held-back calibration samples" in w for w in val["warnings"])
    with pytest.raises(neuroc.InvalidArgument, match="target_loss"):
        neuroc.convert(cnn, calib=x, validation=x, progress=False)


def test_convert_keep_avgpool(cnn, test_xy):
    """keep_avgpool=True keeps the CNN's two average pools as Pool2d layers; by
    default they fold into the Conv and the Gemm that read them (additions)."""
    x, _ = test_xy
    kinds = {keep: [L.kind for L in neuroc.convert(cnn, calib=x[:64], keep_avgpool=keep, progress=False).layers]
             for keep in (None, True)}
    assert kinds[True].count("Pool2d") == 2 and kinds[None].count("Pool2d") == 0
    assert len(kinds[None]) == len(kinds[True]) - 2
