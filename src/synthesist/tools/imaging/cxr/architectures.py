"""The two networks behind the chest X-ray tools, in plain torch, parameter for parameter as torchxrayvision 1.5.7
builds them, so its published weight files load with ``load_state_dict(strict=True)``.

- :class:`DenseNet121` is ``xrv.models.DenseNet`` (DenseNet-121, one input channel, 18 outputs) — the
  architecture of the ``densenet121-res224-all`` weights;
- :class:`PSPNet` is the network inside ``xrv.baseline_models.chestx_det.PSPNet`` (ptsemseg's PSPNet, a dilated
  ResNet-101 encoder with pyramid pooling, 14 anatomical structures).

Why not import torchxrayvision: its package imports torchvision at import time, and the only torchvision wheels on
this project's registries are built against CUDA torch; against the CPU torch they fail to import, and an installed
torchvision that cannot import also breaks transformers (sentence-transformers, our embedder). The two networks use
nothing from torchvision, so they are written here, after torchxrayvision 1.5.7 (Apache-2.0, Joseph Paul Cohen et
al.) and ptsemseg (MIT, Meet Shah). ``tests/agents/visual/cxr_state_dict_layout.json`` holds the names and shapes
of torchxrayvision's own state dicts, and a test checks these classes against it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

# --- DenseNet-121 (xrv.models.DenseNet) ----------------------------------------------------------------------------


class _DenseLayer(nn.Sequential):
    def __init__(self, channels: int, growth: int = 32, bottleneck: int = 4):
        super().__init__()
        self.add_module("norm1", nn.BatchNorm2d(channels))
        self.add_module("relu1", nn.ReLU(inplace=True))
        self.add_module("conv1", nn.Conv2d(channels, bottleneck * growth, kernel_size=1, bias=False))
        self.add_module("norm2", nn.BatchNorm2d(bottleneck * growth))
        self.add_module("relu2", nn.ReLU(inplace=True))
        self.add_module("conv2", nn.Conv2d(bottleneck * growth, growth, kernel_size=3, padding=1, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, super().forward(x)], 1)


class _Transition(nn.Sequential):
    def __init__(self, channels: int, out: int):
        super().__init__()
        self.add_module("norm", nn.BatchNorm2d(channels))
        self.add_module("relu", nn.ReLU(inplace=True))
        self.add_module("conv", nn.Conv2d(channels, out, kernel_size=1, bias=False))
        self.add_module("pool", nn.AvgPool2d(kernel_size=2, stride=2))


class DenseNet121(nn.Module):
    """DenseNet-121 on one grey channel in [-1024, 1024] at 224×224 → ``outputs`` logits (one per label)."""

    def __init__(self, outputs: int = 18, growth: int = 32, blocks: tuple[int, ...] = (6, 12, 24, 16)):
        super().__init__()
        self.features = nn.Sequential()
        self.features.add_module("conv0", nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False))
        self.features.add_module("norm0", nn.BatchNorm2d(64))
        self.features.add_module("relu0", nn.ReLU(inplace=True))
        self.features.add_module("pool0", nn.MaxPool2d(kernel_size=3, stride=2, padding=1))
        channels = 64
        for index, layers in enumerate(blocks, start=1):
            block = nn.Sequential()
            for layer in range(layers):
                block.add_module(f"denselayer{layer + 1}", _DenseLayer(channels + layer * growth, growth))
            self.features.add_module(f"denseblock{index}", block)
            channels += layers * growth
            if index != len(blocks):
                self.features.add_module(f"transition{index}", _Transition(channels, channels // 2))
                channels //= 2
        self.features.add_module("norm5", nn.BatchNorm2d(channels))
        self.classifier = nn.Linear(channels, outputs)
        for module in self.modules():  # torchvision's initialisation, as torchxrayvision does
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight)
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.constant_(module.weight, 1)
                nn.init.constant_(module.bias, 0)
            elif isinstance(module, nn.Linear):
                nn.init.constant_(module.bias, 0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = F.relu(self.features(x))
        return self.classifier(F.adaptive_avg_pool2d(features, (1, 1)).flatten(1))


# --- PSPNet (ptsemseg, as in xrv.baseline_models.chestx_det) ----------------------------------------------------------


class _ConvNorm(nn.Module):
    """ptsemseg's ``conv2DBatchNorm`` (``relu=False``, attribute ``cb_unit``) and ``conv2DBatchNormRelu``
    (``cbr_unit``): a bias-free convolution, batch norm and optionally ReLU."""

    def __init__(self, cin: int, cout: int, kernel: int, stride: int = 1, padding: int = 0, dilation: int = 1,
                 relu: bool = True):
        super().__init__()
        layers: list[nn.Module] = [nn.Conv2d(cin, cout, kernel, stride=stride, padding=padding, dilation=dilation,
                                             bias=False), nn.BatchNorm2d(cout)]
        if relu:
            layers.append(nn.ReLU(inplace=True))
        setattr(self, "cbr_unit" if relu else "cb_unit", nn.Sequential(*layers))
        self._unit = "cbr_unit" if relu else "cb_unit"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return getattr(self, self._unit)(x)


class _Bottleneck(nn.Module):
    """ptsemseg's ``bottleNeckPSP`` (``project=True``: a projected shortcut) or ``bottleNeckIdentifyPSP``."""

    def __init__(self, cin: int, mid: int, cout: int, stride: int, dilation: int, project: bool):
        super().__init__()
        self.cbr1 = _ConvNorm(cin, mid, 1)
        self.cbr2 = _ConvNorm(mid, mid, 3, stride=stride if project else 1, padding=dilation, dilation=dilation)
        self.cb3 = _ConvNorm(mid, cout, 1, relu=False)
        self.cb4 = _ConvNorm(cin, cout, 1, stride=stride, relu=False) if project else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = self.cb4(x) if self.cb4 is not None else x
        return F.relu(self.cb3(self.cbr2(self.cbr1(x))) + shortcut)


class _ResidualBlock(nn.Module):
    def __init__(self, blocks: int, cin: int, mid: int, cout: int, stride: int, dilation: int = 1):
        super().__init__()
        stride = 1 if dilation > 1 else stride
        self.layers = nn.Sequential(_Bottleneck(cin, mid, cout, stride, dilation, project=True),
                                    *(_Bottleneck(cout, mid, cout, 1, dilation, project=False)
                                      for _ in range(blocks - 1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class _PyramidPooling(nn.Module):
    def __init__(self, channels: int, sizes: tuple[int, ...] = (6, 3, 2, 1)):
        super().__init__()
        self.path_module_list = nn.ModuleList(_ConvNorm(channels, channels // len(sizes), 1) for _ in sizes)
        self.sizes = sizes

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        height, width = x.shape[2:]
        slices = [x]
        for module, size in zip(self.path_module_list, self.sizes, strict=True):
            kernel = (int(height / size), int(width / size))
            pooled = module(F.avg_pool2d(x, kernel, stride=kernel))
            slices.append(F.interpolate(pooled, size=(height, width), mode="bilinear"))
        return torch.cat(slices, dim=1)


class PSPNet(nn.Module):
    """ptsemseg's PSPNet (ResNet-101 blocks 3-4-23-3, dilations 2 and 4) → ``classes`` logit maps at input size.

    Input: three channels, ImageNet-normalised, 512×512 for the chestx_det weights. The auxiliary head is kept so
    the published weights load; it is only used in training, so :meth:`forward` skips it.
    """

    def __init__(self, classes: int = 14, blocks: tuple[int, int, int, int] = (3, 4, 23, 3)):
        super().__init__()
        self.convbnrelu1_1 = _ConvNorm(3, 64, 3, stride=2, padding=1)
        self.convbnrelu1_2 = _ConvNorm(64, 64, 3, padding=1)
        self.convbnrelu1_3 = _ConvNorm(64, 128, 3, padding=1)
        self.res_block2 = _ResidualBlock(blocks[0], 128, 64, 256, 1, 1)
        self.res_block3 = _ResidualBlock(blocks[1], 256, 128, 512, 2, 1)
        self.res_block4 = _ResidualBlock(blocks[2], 512, 256, 1024, 1, 2)
        self.res_block5 = _ResidualBlock(blocks[3], 1024, 512, 2048, 1, 4)
        self.pyramid_pooling = _PyramidPooling(2048)
        self.cbr_final = _ConvNorm(4096, 512, 3, padding=1)
        self.dropout = nn.Dropout2d(p=0.1)
        self.classification = nn.Conv2d(512, classes, 1)
        self.convbnrelu4_aux = _ConvNorm(1024, 256, 3, padding=1)
        self.aux_cls = nn.Conv2d(256, classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size = x.shape[2:]
        x = self.convbnrelu1_3(self.convbnrelu1_2(self.convbnrelu1_1(x)))
        x = F.max_pool2d(x, 3, 2, 1)
        x = self.res_block5(self.res_block4(self.res_block3(self.res_block2(x))))
        x = self.classification(self.dropout(self.cbr_final(self.pyramid_pooling(x))))
        return F.interpolate(x, size=size, mode="bilinear")
