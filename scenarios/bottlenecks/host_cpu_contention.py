"""host.cpu_contention: the job and its loader workers are pinned to two cores, and CPU burners
(outside the job's process tree: started with setsid) spin on the same cores.
--fixed: no burners."""
import os
import subprocess
import sys

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

import common

CORES = {0, 1}


class Images(Dataset):
    def __len__(self):
        return 100000

    def __getitem__(self, i):
        img = np.random.default_rng(i).random((3, 96, 96), dtype=np.float32)
        return torch.from_numpy((img + np.roll(img, 1, axis=2)) / 2.0), i % 10


def main():
    args = common.parse_args(__doc__)
    dev = common.require_cuda()
    os.sched_setaffinity(0, CORES)
    burners = []
    if not args.fixed:
        for core in CORES:
            burners.append(subprocess.Popen(
                ["taskset", "-c", str(core), sys.executable, "-c", "while True: pass"],
                start_new_session=True))
    model = common.small_cnn(torch).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    it = iter(DataLoader(Images(), batch_size=64, num_workers=2, persistent_workers=True))

    def step(_):
        x, y = next(it)
        loss = torch.nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    try:
        common.run_steps(args, step, "host.cpu_contention")
    finally:
        for b in burners:
            b.kill()


if __name__ == "__main__":
    main()
