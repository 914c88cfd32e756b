"""Small modern networks for Fashion-MNIST (1x28x28 inputs scaled to [0,1], 10 classes).

The trained-weights evidence of issue 28 (bench/modern_fmnist.py trains, converts and
evaluates them); importable by anyone who wants the same architectures:

  SmallViT        patch 4 (4x4 conv, stride 4: 7x7 = 49 tokens), class token, learned
                  position embedding, 4 pre-norm blocks (LayerNorm, 4-head attention,
                  LayerNorm, MLP 64 -> 128 -> 64 with GELU), final LayerNorm, Linear(64, 10).
                  torchvision's VisionTransformer with a 1-channel patch embedding, so its
                  ONNX export is the one `neuroc convert` reads for vit_b_16/vit_b_32.
  SmallEfficientNet  stem Conv3x3-BN-SiLU, four MBConv blocks (1x1 expand-BN-SiLU,
                  depthwise 3x3-BN-SiLU, squeeze-excitation with a SiLU and a Sigmoid
                  gate, 1x1 project-BN, residual where shapes allow), 1x1 head-BN-SiLU,
                  global average pooling, Linear.

Export both with grad enabled (not under torch.no_grad()): under it torch 1.13's
nn.MultiheadAttention takes a fused path that has no ONNX export.
"""
import torch
import torch.nn as nn
import torchvision


def small_vit(dim=64, depth=4, heads=4, mlp=128, classes=10):
    net = torchvision.models.VisionTransformer(image_size=28, patch_size=4, num_layers=depth,
                                               num_heads=heads, hidden_dim=dim, mlp_dim=mlp,
                                               num_classes=classes)
    net.conv_proj = nn.Conv2d(1, dim, kernel_size=4, stride=4)  # grey images
    return net


class SqueezeExcite(nn.Module):
    def __init__(self, ch, squeeze):
        super().__init__()
        self.reduce = nn.Conv2d(ch, squeeze, 1)
        self.expand = nn.Conv2d(squeeze, ch, 1)

    def forward(self, x):
        g = x.mean((2, 3), keepdim=True)
        g = torch.sigmoid(self.expand(nn.functional.silu(self.reduce(g))))
        return x * g


class MBConv(nn.Module):
    def __init__(self, cin, cout, stride, expand=4, se_ratio=0.25):
        super().__init__()
        mid = cin * expand
        self.block = nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU(),
            nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid), nn.SiLU(),
            SqueezeExcite(mid, max(1, int(cin * se_ratio))),
            nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class SmallEfficientNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.SiLU(),
            MBConv(16, 24, 2),   # 28 -> 14
            MBConv(24, 24, 1),
            MBConv(24, 40, 2),   # 14 -> 7
            MBConv(40, 40, 1),
            nn.Conv2d(40, 128, 1, bias=False), nn.BatchNorm2d(128), nn.SiLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(128, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


MODELS = {"vit": small_vit, "effnet": SmallEfficientNet}
