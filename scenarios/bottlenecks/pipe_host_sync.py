"""pipe.host_sync: `.item()` on the loss and on per-layer statistics every step, so the CPU
blocks on the GPU several times a step. --fixed: statistics stay on the GPU and are read every
20 steps."""
import torch

import common


def main():
    args = common.parse_args(__doc__)
    dev = common.require_cuda()
    model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    x = torch.randn(256, 2048, device=dev)
    running = torch.zeros((), device=dev)

    def step(i):
        nonlocal running
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if args.fixed:
            running += loss.detach()
            if i % 20 == 0:
                _ = running.item()
        else:
            _ = loss.item()
            for p in model.parameters():   # per-parameter norms read on the host
                _ = p.grad.norm().item()

    common.run_steps(args, step, "pipe.host_sync")


if __name__ == "__main__":
    main()
