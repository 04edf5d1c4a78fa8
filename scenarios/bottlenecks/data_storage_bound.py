"""data.storage_bound: every batch is read from a large file with O_DIRECT (bypassing the page
cache) in small random blocks, so the disk, not the CPU or GPU, sets the pace. --fixed: the
same data read once into memory (page cache / RAM) before training."""
import mmap
import os
import random

import torch

import common

BLOCK = 1 << 20          # 1 MiB per read
FILE_MB = common.env_int("GW_SCENARIO_FILE_MB", 2048)


def ensure_file(path):
    if os.path.exists(path) and os.path.getsize(path) >= FILE_MB << 20:
        return
    with open(path, "wb") as f:
        chunk = os.urandom(BLOCK)
        for _ in range(FILE_MB):
            f.write(chunk)


def main():
    args = common.parse_args(__doc__)
    dev = common.require_cuda()
    path = os.environ.get("GW_SCENARIO_DATA", "/tmp/gw_scenario_storage.bin")
    ensure_file(path)
    model = torch.nn.Linear(4096, 4096).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    blocks = FILE_MB
    cached = None
    if args.fixed:
        with open(path, "rb") as f:
            cached = f.read(64 * BLOCK)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECT", 0))
    buf = mmap.mmap(-1, BLOCK)  # page-aligned, as O_DIRECT requires
    rng = random.Random(0)

    def read_batch():
        if cached is not None:
            off = rng.randrange(64) * BLOCK
            return torch.frombuffer(bytearray(cached[off:off + 16 * 4096 * 4]), dtype=torch.float32)
        data = bytearray()
        for _ in range(16):  # 16 random 1 MiB reads per batch
            os.preadv(fd, [buf], rng.randrange(blocks) * BLOCK)
            data += buf[:4096 * 4]
        return torch.frombuffer(data, dtype=torch.float32)

    def step(_):
        x = read_batch().view(16, 4096).to(dev)
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    common.run_steps(args, step, "data.storage_bound")
    os.close(fd)


if __name__ == "__main__":
    main()
