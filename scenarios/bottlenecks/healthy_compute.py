"""Healthy control: data already on the GPU, bf16 matmuls large enough to keep the GPU busy,
no host syncs. Must produce no finding above info. (--fixed is accepted and changes nothing.)"""
import torch

import common


def main():
    args = common.parse_args(__doc__)
    dev = common.require_cuda()
    model = torch.nn.Sequential(*[torch.nn.Linear(8192, 8192) for _ in range(6)]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(8192, 8192, device=dev)

    def step(_):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).float().square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    common.run_steps(args, step, "healthy")


if __name__ == "__main__":
    main()
