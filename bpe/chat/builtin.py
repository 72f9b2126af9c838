"""Built-in chat templates: the formats of common model families, in Python (no jinja2).

``llama3`` (Llama 3 Instruct: a header per turn, contents trimmed, ``<|eot_id|>``),
``llama3.1`` (the same with Llama 3.1's system block: knowledge cut-off and date, tool
results as ``ipython`` turns), ``chatml`` (``<|im_start|>role\\ncontent<|im_end|>\\n``),
``qwen2.5`` (ChatML with Qwen2.5's default system prompt and tool results), ``mistral``
(Mistral Instruct v0.1: ``[INST] ... [/INST]``, alternating turns) and ``gemma``
(``<start_of_turn>user|model``, contents trimmed, alternating turns, no system turn).  Each
renders exactly what that family's own Jinja template renders for the conversations it
accepts (tests_extended/test_chat_templates.py checks them against the official templates),
raises ``ChatTemplateError`` naming the message where the official one raises or where it
needs what a built-in leaves out (tool calls: use the model's own template), and marks each
assistant turn (its content and end-of-turn token) for the assistant mask.

Messages arrive checked and tracked (``bpe.chat``): contents are strings, all of them
content.  This module does not encode.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from ..errors import ChatTemplateError
from .tracked import concat, data, mark_assistant

QWEN25_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


@dataclass(frozen=True)
class Builtin:
    name: str
    roles: tuple            # the roles it accepts
    structural: tuple       # the special tokens it writes, besides bos/eos
    bos: str                # its bos/eos when the tokenizer's config names none ("": none)
    eos: str
    render: Callable        # (messages, add_generation_prompt, bos, eos, options) -> str
    writes_eos: bool = False


def _alternating(messages: list, name: str, first: int = 0) -> None:
    for i, m in enumerate(messages[first:], first):
        if (m["role"] == "user") != ((i - first) % 2 == 0):
            raise ChatTemplateError(
                f"message {i}: the {name!r} template needs turns that alternate user/assistant/user/... "
                f"(got role {m['role']!r} there)")


def _llama_turns(messages, tool_results: bool) -> list:
    out = []
    for m in messages:
        if tool_results and m["role"] in ("ipython", "tool"):
            # (Llama 3.1's template writes a tool result as JSON, a string one too)
            out += ["<|start_header_id|>ipython<|end_header_id|>\n\n", _json(m["content"]), "<|eot_id|>"]
            continue
        turn = concat((m["content"].strip(), "<|eot_id|>"))
        out += ["<|start_header_id|>", m["role"], "<|end_header_id|>\n\n",
                mark_assistant(turn) if m["role"] == "assistant" else turn]
    return out


_LLAMA_PROMPT = "<|start_header_id|>assistant<|end_header_id|>\n\n"


def _llama3(messages, add_generation_prompt, bos, eos, options):
    return concat([bos, *_llama_turns(messages, False), _LLAMA_PROMPT if add_generation_prompt else ""])


def _llama31(messages, add_generation_prompt, bos, eos, options):
    system = ""
    if messages[0]["role"] == "system":
        system, messages = messages[0]["content"].strip(), messages[1:]
    return concat([bos, "<|start_header_id|>system<|end_header_id|>\n\n", "Cutting Knowledge Date: December 2023\n",
                   "Today Date: ", options.get("date_string", "26 Jul 2024"), "\n\n", system, "<|eot_id|>",
                   *_llama_turns(messages, True), _LLAMA_PROMPT if add_generation_prompt else ""])


def _json(text: str) -> str:
    return data(json.dumps(str(text), ensure_ascii=False))


def _chatml_turns(messages, default_system=None, tool_results=False):
    out = []
    if default_system is not None and messages[0]["role"] != "system":
        out.append(f"<|im_start|>system\n{default_system}<|im_end|>\n")
    for i, m in enumerate(messages):
        if tool_results and m["role"] == "tool":
            if i == 0 or messages[i - 1]["role"] != "tool":
                out.append("<|im_start|>user")
            out += ["\n<tool_response>\n", m["content"], "\n</tool_response>"]
            if i == len(messages) - 1 or messages[i + 1]["role"] != "tool":
                out.append("<|im_end|>\n")
            continue
        turn = concat((m["content"], "<|im_end|>"))
        out += ["<|im_start|>", m["role"], "\n", mark_assistant(turn) if m["role"] == "assistant" else turn, "\n"]
    return out


def _chatml(messages, add_generation_prompt, bos, eos, options):
    out = _chatml_turns(messages)
    if add_generation_prompt:
        out.append("<|im_start|>assistant\n")
    return concat(out)


def _qwen25(messages, add_generation_prompt, bos, eos, options):
    out = _chatml_turns(messages, QWEN25_SYSTEM, tool_results=True)
    if add_generation_prompt:
        out.append("<|im_start|>assistant\n")
    return concat(out)


def _mistral(messages, add_generation_prompt, bos, eos, options):
    _alternating(messages, "mistral")
    out = [bos]
    for m in messages:
        if m["role"] == "user":
            out += ["[INST] ", m["content"], " [/INST]"]
        else:
            out.append(mark_assistant(concat((m["content"], eos))))
    return concat(out)


def _gemma(messages, add_generation_prompt, bos, eos, options):
    _alternating(messages, "gemma")
    out = [bos]
    for m in messages:
        turn = concat((m["content"].strip(), "<end_of_turn>"))
        if m["role"] == "assistant":
            out += ["<start_of_turn>model\n", mark_assistant(turn), "\n"]
        else:
            out += ["<start_of_turn>user\n", turn, "\n"]
    if add_generation_prompt:
        out.append("<start_of_turn>model\n")
    return concat(out)


_LLAMA3_TOKENS = ("<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>")
_CHATML_TOKENS = ("<|im_start|>", "<|im_end|>")

TEMPLATES = {b.name: b for b in (
    Builtin("llama3", ("system", "user", "assistant", "ipython"), _LLAMA3_TOKENS, "<|begin_of_text|>",
            "<|eot_id|>", _llama3),
    Builtin("llama3.1", ("system", "user", "assistant", "ipython", "tool"), _LLAMA3_TOKENS, "<|begin_of_text|>",
            "<|eot_id|>", _llama31),
    Builtin("chatml", ("system", "user", "assistant", "tool"), _CHATML_TOKENS, "", "<|im_end|>", _chatml),
    Builtin("qwen2.5", ("system", "user", "assistant", "tool"), _CHATML_TOKENS, "", "<|im_end|>", _qwen25),
    Builtin("mistral", ("user", "assistant"), (), "<s>", "</s>", _mistral, writes_eos=True),
    Builtin("gemma", ("user", "assistant"), ("<start_of_turn>", "<end_of_turn>"), "<bos>", "<eos>", _gemma),
)}
