"""The plain-torch models of test/python/models/test_ort_tool_models.py (the
float models that onnxruntime's tools rewrite): exported once by
export_torch_models.py. Requires torch (the ``[export]`` extra)."""
from __future__ import annotations

import math

import torch
from torch import nn
import torch.nn.functional as F

from export_torch_models import VOCAB


class HFBertLayer(nn.Module):
    """One HF BertLayer as HF writes it (separate query / key / value Linears,
    ``transpose_for_scores`` by view + permute, scores / sqrt(dh) + additive
    mask, post-LN with the residual): the pattern onnxruntime's BERT fusion
    knows."""

    def __init__(self, d: int, heads: int, ff: int):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.dense, self.ln1 = nn.Linear(d, d), nn.LayerNorm(d, eps=1e-12)
        self.inter, self.out = nn.Linear(d, ff), nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)

    def heads(self, x):
        return x.view(x.size()[:-1] + (self.h, self.dh)).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.heads(self.query(x)), self.heads(self.key(x)), self.heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh)
        probs = torch.softmax(scores + mask, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size()[:-2] + (self.h * self.dh,))
        a = self.ln1(self.dense(ctx) + x)
        return self.ln2(self.out(F.gelu(self.inter(a))) + a)


class HFBert(nn.Module):
    """Word + token-type + position embeddings (position ids sliced from a
    buffer), LayerNorm, HF BERT layers; the 0/1 attention mask becomes
    ``(1 - mask) * -10000``."""

    def __init__(self, d: int = 32, heads: int = 4, ff: int = 64, layers: int = 1,
                 max_pos: int = 64):
        super().__init__()
        self.words, self.pos = nn.Embedding(VOCAB, d), nn.Embedding(max_pos, d)
        self.types, self.ln = nn.Embedding(2, d), nn.LayerNorm(d, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)))
        self.layers = nn.ModuleList(HFBertLayer(d, heads, ff) for _ in range(layers))

    def forward(self, input_ids, attention_mask, token_type_ids):
        pos = self.position_ids[:, :input_ids.size(1)]
        x = self.ln(self.words(input_ids) + self.types(token_type_ids) + self.pos(pos))
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x


class Conv1D(nn.Module):
    """GPT-2's Conv1D: ``addmm(bias, x.view(-1, nx), weight)`` (a Gemm)."""

    def __init__(self, nf: int, nx: int):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.1)
        self.bias = nn.Parameter(torch.randn(nf) * 0.1)

    def forward(self, x):
        out = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return out.view(x.size()[:-1] + (self.nf,))


class GPT2Block(nn.Module):
    """HF GPT-2 block: fused c_attn, past as one [2, B, H, P, Dh] tensor,
    present = stack(k, v), causal mask sliced from a tril buffer, additive
    padding mask, tanh GELU ("gelu_new")."""

    def __init__(self, d: int, heads: int, ff: int, max_pos: int):
        super().__init__()
        self.h, self.dh, self.d = heads, d // heads, d
        self.register_buffer("bias", torch.tril(torch.ones(max_pos, max_pos, dtype=torch.bool))
                             .view(1, 1, max_pos, max_pos))
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.c_proj = Conv1D(3 * d, d), Conv1D(d, d)
        self.c_fc, self.c_proj2 = Conv1D(ff, d), Conv1D(d, ff)

    def split_heads(self, x):
        return x.view(x.size()[:-1] + (self.h, self.dh)).permute(0, 2, 1, 3)

    def forward(self, x, layer_past, mask):
        q, k, v = self.c_attn(self.ln_1(x)).split(self.d, dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        k = torch.cat((layer_past[0], k), dim=-2)
        v = torch.cat((layer_past[1], v), dim=-2)
        present = torch.stack((k, v))
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.tensor(v.size(-1) ** 0.5, dtype=w.dtype)
        ql, kl = q.size(-2), k.size(-2)
        causal = self.bias[:, :, kl - ql:kl, :kl]
        w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
        w = torch.softmax(w + mask, dim=-1)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        x = x + self.c_proj(a.view(a.size()[:-2] + (self.d,)))
        h = self.c_fc(self.ln_2(x))
        c = math.sqrt(2.0 / math.pi)
        h = 0.5 * h * (1.0 + torch.tanh(c * (h + 0.044715 * torch.pow(h, 3.0))))
        return x + self.c_proj2(h), present


class GPT2(nn.Module):
    def __init__(self, d: int = 32, heads: int = 4, ff: int = 64, layers: int = 1,
                 max_pos: int = 64):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCAB, d), nn.Embedding(max_pos, d)
        self.blocks = nn.ModuleList(GPT2Block(d, heads, ff, max_pos) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, input_ids, position_ids, attention_mask, *past):
        x = self.wte(input_ids) + self.wpe(position_ids)
        mask = attention_mask.view(input_ids.size(0), -1)[:, None, None, :].to(x.dtype)
        mask = (1.0 - mask) * -10000.0
        presents = []
        for block, p in zip(self.blocks, past):
            x, present = block(x, p, mask)
            presents.append(present)
        return (self.ln_f(x), *presents)


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float = 1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(1 + 0.1 * torch.randn(d)), eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class LlamaDecoder(nn.Module):
    """Embedding, one LLaMA block (RMSNorm, bias-free q/k/v/o, causal softmax
    attention without rotary, SwiGLU MLP), final RMSNorm, LM head: 8 MatMuls
    with constant weights, K = d and ff (multiples of MatMulNBits' block size 32)."""

    def __init__(self, d: int = 64, heads: int = 4, ff: int = 128):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.emb = nn.Embedding(VOCAB, d)
        self.n1, self.n2, self.nf = RMSNorm(d), RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(d, ff, bias=False), nn.Linear(d, ff, bias=False)
        self.down, self.head = nn.Linear(ff, d, bias=False), nn.Linear(d, VOCAB, bias=False)

    def forward(self, input_ids):
        b, s = input_ids.shape
        x = self.emb(input_ids)
        y = self.n1(x)
        q, k, v = (p(y).view(b, s, self.h, self.dh).transpose(1, 2)
                   for p in (self.q, self.k, self.v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.dh)
        causal = torch.triu(torch.ones(s, s, dtype=torch.bool), 1)
        scores = scores.masked_fill(causal, float("-inf"))
        x = x + self.o((torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(b, s, -1))
        y = self.n2(x)
        x = x + self.down(F.silu(self.gate(y)) * self.up(y))
        return self.head(self.nf(x))


class ResidualCNN(nn.Module):
    """conv-BN-ReLU, conv-BN, residual Add, ReLU, global average pool, Linear."""

    def __init__(self, c: int = 16, classes: int = 32):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        x = F.relu(self.b1(self.c1(x)))
        x = F.relu(x + self.b2(self.c2(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class LSTMModel(nn.Module):
    """2-layer bidirectional LSTM (batch first), Linear head."""

    def __init__(self, d: int = 16, hidden: int = 32):
        super().__init__()
        self.rnn = nn.LSTM(d, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, 4)

    def forward(self, x):
        return self.fc(self.rnn(x)[0])
