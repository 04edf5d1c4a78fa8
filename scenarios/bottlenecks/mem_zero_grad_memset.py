"""mem.zero_grad_memset: a wide model whose gradients are zero-filled (memset kernels) every
step by zero_grad(set_to_none=False). --fixed: zero_grad(set_to_none=True)."""
import torch

import common


def main():
    args = common.parse_args(__doc__, default_steps=100)
    dev = common.require_cuda()
    model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096, bias=False) for _ in range(24)]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(8, 4096, device=dev)

    def step(_):
        opt.zero_grad(set_to_none=args.fixed)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()

    common.run_steps(args, step, "mem.zero_grad_memset")


if __name__ == "__main__":
    main()
