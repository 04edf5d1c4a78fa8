"""data.loader_wait + pipe.no_workers: DataLoader(num_workers=0) with CPU-heavy transforms, so
the training thread prepares every batch while the GPU waits. --fixed: 4 worker processes,
pinned memory, prefetching."""
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

import common


class HeavyImages(Dataset):
    def __len__(self):
        return 100000

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        img = rng.random((3, 128, 128), dtype=np.float32)
        for _ in range(6):  # CPU-heavy "augmentation": blurs in NumPy
            img = (img + np.roll(img, 1, axis=1) + np.roll(img, 1, axis=2)) / 3.0
        return torch.from_numpy(img), i % 10


def main():
    args = common.parse_args(__doc__)
    dev = common.require_cuda()
    model = common.small_cnn(torch).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    workers = 4 if args.fixed else 0
    loader = DataLoader(HeavyImages(), batch_size=64, num_workers=workers, pin_memory=args.fixed,
                        persistent_workers=workers > 0, prefetch_factor=4 if workers else None)
    it = iter(loader)

    def step(_):
        x, y = next(it)
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    common.run_steps(args, step, "data.loader_wait")


if __name__ == "__main__":
    main()
