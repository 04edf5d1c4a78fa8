"""pipe.pageable_copy: large host-to-device copies from pageable memory every step.
--fixed: the same buffers pinned and copied with non_blocking=True."""
import torch

import common


def main():
    args = common.parse_args(__doc__)
    dev = common.require_cuda()
    host = [torch.randn(8, 3, 512, 512) for _ in range(4)]
    if args.fixed:
        host = [h.pin_memory() for h in host]
    model = common.small_cnn(torch).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step(i):
        x = host[i % len(host)].to(dev, non_blocking=args.fixed)
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    common.run_steps(args, step, "pipe.pageable_copy")


if __name__ == "__main__":
    main()
