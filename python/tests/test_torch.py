"""A torch.nn.Module converted directly (exported to ONNX in memory), against
`neuroc eval` of the same module exported to a file. Needs Debian's
python3-torch; skipped with the reason where it is absent."""
import numpy as np
import pytest

import neuroc
from conftest import eval_figures

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: apt install python3-torch)")


@pytest.fixture(scope="module")
def trained(request, test_xy):
    """A small CNN trained for one quick epoch, and float32 data (N, 1, 28, 28)."""
    try:
        tx, ty, ex, ey = request.getfixturevalue("fmnist")
        f = lambda a: a[:, None].astype(np.float32) / np.float32(255)  # noqa: E731
        train_x, train_y, test_x, test_y = f(tx[:4000]), ty[:4000], f(ex[:1000]), ey[:1000]
    except pytest.skip.Exception:
        train_x, train_y = test_xy
        test_x, test_y = test_xy
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.AvgPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.AvgPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(16 * 7 * 7, 10))
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    X, Y = torch.from_numpy(train_x), torch.from_numpy(train_y)
    for i in range(0, len(X), 100):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(X[i:i + 100]), Y[i:i + 100]).backward()
        opt.step()
    return net, train_x, train_y, test_x, test_y


def test_module_converts_as_the_program_does(cli, trained, tmp_path):
    net, train_x, _, test_x, test_y = trained
    calib = train_x[:1000]
    r = neuroc.convert(net, calib=calib, timesteps=8, progress=False).evaluate(test_x, test_y, timesteps=32)
    assert net.training  # the export left the module's mode as it was

    (tmp_path / "net.onnx").write_bytes(neuroc.export_onnx(net, calib[:1]))
    for name, a in {"calib": calib, "x": test_x, "y": test_y}.items():
        np.save(tmp_path / f"{name}.npy", a)
    p = cli("eval", tmp_path / "net.onnx", "--calib", tmp_path / "calib.npy", "--convert-T", 8,
            "--data", tmp_path / "x.npy", "--labels", tmp_path / "y.npy", "-T", 32, "--backend", "cpu-fast")
    acc, ann = eval_figures(p.stdout)
    assert f"{r.accuracy[32]:.2f}" == acc[32] and f"{r.ann_accuracy:.2f}" == ann
    assert r.accuracy[32] > 50  # it learnt something, and the SNN follows it


def test_tensors_and_dataloader(trained, tmp_path):
    """calib as a tensor or a DataLoader gives the network an array gives;
    the ANN it runs predicts what torch predicts."""
    net, train_x, train_y, test_x, _ = trained
    ds = torch.utils.data.TensorDataset(torch.from_numpy(train_x), torch.from_numpy(train_y))
    files = []
    for i, calib in enumerate([train_x[:500], torch.from_numpy(train_x[:500]),
                               torch.utils.data.DataLoader(ds, batch_size=64)]):
        snn = neuroc.convert(net, calib=calib, calib_samples=500, progress=False)
        snn.save(tmp_path / f"{i}.nir")
        files.append((tmp_path / f"{i}.nir").read_bytes())
    assert files[1] == files[0] and files[2] == files[0]
    with torch.no_grad():
        want = net.eval()(torch.from_numpy(test_x)).argmax(1).numpy()
    got = snn.ann.run(torch.from_numpy(test_x)).argmax(1)
    assert (got == want).mean() > 0.995
    out = snn.run(torch.from_numpy(test_x[:16]), timesteps=4)  # tensors in, numpy out
    assert isinstance(out, np.ndarray) and out.shape == (16, 10)


def test_module_needs_calib(trained):
    with pytest.raises(neuroc.InvalidArgument, match="calib"):
        neuroc.convert(trained[0])
