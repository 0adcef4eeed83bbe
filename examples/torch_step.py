"""A PyTorch training step for `gemmlab profile --script examples/torch_step.py --range step`.

Warm-up steps run outside the NVTX range "step"; one step runs inside it: forward, backward and the
optimizer. PyTorch's autograd runs the backward pass on a thread of its own, so the range catches
the backward kernels only because gemmlab profiles NVTX ranges process-wide
(`--nvtx-push-pop-scope process`).
"""

import torch


def main(warmup: int = 3) -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
                                  for _ in range(2)]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(8, 128, 256, device="cuda")

    def step() -> None:
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("step")
    step()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
