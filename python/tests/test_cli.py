"""The package against the neuroc program of the same build: the same .nir
bytes, the same accuracy figures and reports, the same outputs, the same
messages. No figure is hard-coded: both sides run here."""
import json

import numpy as np
import pytest

import neuroc
from conftest import eval_figures, model_path


@pytest.fixture(scope="session")
def data(request, tmp_path_factory, test_xy):
    """uint8 calibration images (the first 500 training images, or the shipped
    test images), 1000 test images and labels, as arrays and .npy files."""
    try:
        train_x, _, test_x, test_y = request.getfixturevalue("fmnist")
        calib, x, y = train_x[:500], test_x[:1000], test_y[:1000]
    except pytest.skip.Exception:
        x, y = test_xy
        calib = (x[:, 0] * 255).round().astype(np.uint8)
    d = tmp_path_factory.mktemp("cli")
    files = {"calib": d / "calib.npy", "x": d / "x.npy", "y": d / "y.npy"}
    for k, v in zip(files, (calib, x, y)):
        np.save(files[k], v)
    return calib, x, y, files, d


CONVERT = dict(timesteps=8, threshold="p99.9", per_channel=True, potential_correction=True)
CONVERT_CLI = ["--threshold", "p99.9", "--per-channel", "--potential-correction"]


def test_same_nir_bytes(cli, data):
    calib, _, _, f, d = data
    cli("convert", model_path("cnn"), "--calib", f["calib"], "-T", 8, *CONVERT_CLI, "-o", d / "cli.nir")
    neuroc.convert(model_path("cnn"), calib=calib, progress=False, **CONVERT).save(d / "py.nir")
    assert (d / "py.nir").read_bytes() == (d / "cli.nir").read_bytes()


def test_same_accuracy_and_report(cli, data):
    calib, x, y, f, d = data
    p = cli("eval", model_path("cnn"), "--calib", f["calib"], "--convert-T", 8, *CONVERT_CLI, "--data", f["x"],
            "--labels", f["y"], "-T", 32, "--backend", "cpu-fast", "--report", d / "eval.json")
    acc, ann = eval_figures(p.stdout)
    assert sorted(acc) == [1, 2, 4, 8, 16, 32]
    r = neuroc.convert(model_path("cnn"), calib=calib, progress=False, **CONVERT).evaluate(x, y, timesteps=32)
    assert {t: f"{r.accuracy[t]:.2f}" for t in acc} == acc
    assert f"{r.ann_accuracy:.2f}" == ann
    assert json.loads(r.to_json()) == json.loads((d / "eval.json").read_text())


@pytest.mark.parametrize("extra", [[], ["--encoding", "poisson", "--seed", "3", "--batch", "100"]])
def test_same_run_output(cli, data, extra):
    calib, x, _, f, d = data
    net = d / "run.nir"
    if not net.exists():
        cli("convert", model_path("cnn"), "--calib", f["calib"], "-o", net)
    cli("run", net, "--input", f["x"], "-T", 8, "--backend", "cpu-fast", "--output", d / "out.npy", *extra)
    kw = {"encoding": "poisson", "seed": 3, "batch": 100} if extra else {}
    out = neuroc.load_nir(net).run(x, timesteps=8, backend="cpu-fast", **kw)
    assert np.array_equal(out, np.load(d / "out.npy"))


def test_same_simulation_report(cli, data):
    calib, x, y, f, d = data
    net = d / "sim.nir"
    cli("convert", model_path("cnn"), "--calib", f["calib"], "--maxpool", "average", "--plain-spikes", "-o", net)
    cli("sim", net, "--data", f["x"], "--labels", f["y"], "-T", 8, "--limit", 64, "--no-float",
        "--report", d / "sim.json")
    r = neuroc.load_nir(net).simulate_loihi(x[:64], y[:64], timesteps=8)
    want = json.loads((d / "sim.json").read_text())
    assert json.loads(r.to_json()) == want["fixed_point"] and r.network == want["network"]


def test_same_error_message(cli, tmp_path):
    bad = tmp_path / "truncated.onnx"
    with open(model_path("cnn"), "rb") as src:
        bad.write_bytes(src.read()[:5000])
    with pytest.raises(neuroc.ParseError) as e:
        neuroc.load(bad)
    p = cli("info", bad, check=False)
    assert p.returncode == 1 and str(e.value) in p.stderr
