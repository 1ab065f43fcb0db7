#!/usr/bin/env python3
"""Writes ReMe cards the way ReMe writes them, to test that reme keeps them.

ReMe writes notes with python-frontmatter, whose YAML handler calls
yaml.dump(metadata, Dumper=SafeDumper, default_flow_style=False,
allow_unicode=True) (PyYAML's default sort_keys=True) and strips the result;
the note is "---\n<yaml>\n---\n\n<body>\n". python-frontmatter itself is not
needed: that is all it does.

For each card, <name>.json records every top-level key's own text (what
yaml.dump writes for that key alone), which is the oracle the Go test checks
untouched keys against. Run: python3 gen.py (needs PyYAML).
"""
import json
import os

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))


class IndentedListDumper(yaml.SafeDumper):
    """A dumper that indents block lists under their key (a common setting)."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def dump(meta, dumper=yaml.SafeDumper):
    return yaml.dump(meta, Dumper=dumper, default_flow_style=False, allow_unicode=True)


CARDS = {
    "conversation": (
        {
            "name": "login-refactor-decision",
            "description": "Decided to move the web login to OpenID Connect with the authorization code "
            "flow and PKCE; magic links were rejected because the mail provider throttles bursts, "
            "and the rollout waits for the security review on Friday.",
            "session_id": "4f1c2a9e-7d3b-4c55-9a0e-2b6f0d1c8e77",
            "source_conversation": "[[session/dialog/4f1c2a9e-7d3b-4c55-9a0e-2b6f0d1c8e77.jsonl]]",
            "memory_tags": ["auth", "login_flow", "oidc"],
            "kind": "decision",
            "confidence": "observed",
            "related": "[[daily/2026-06-19/retrieval-regression.md#Numbers|the numbers]]",
            "created_at": "2026-06-20T10:15:00+08:00",
            "reviewed": "no",
        },
        "## Decisions\n- OIDC authorization code flow with PKCE.\n\nSee [[daily/2026-06-19/retrieval-regression.md]].\n",
        yaml.SafeDumper,
    ),
    "chinese": (
        {
            "name": "登录流程重构",
            "description": "陈伟和我讨论了登录流程重构：采用 OpenID Connect 授权码模式加 PKCE，放弃魔法链接，"
            "因为邮件服务商会限流；上线时间定在周五安全评审之后，回滚方案是保留旧的会话接口两周。",
            "memory_tags": ["认证", "登录流程"],
            "people": ["陈伟", "王芳", "Alice Smith"],
            "summary": "Mixed 中文 and English text that is long enough to be wrapped by PyYAML at eighty "
            "columns, with 一些中文 in between the English words so that both kinds of characters appear.",
            "session_id": "cn-0001",
            "source_conversation": "[[session/dialog/cn-0001.jsonl]]",
        },
        "## 方案\n我们决定重构登录流程。\n",
        yaml.SafeDumper,
    ),
    "resource": (
        {
            "name": "quarterly-report",
            "description": "Q2 report: revenue up 12% year over year; churn: 3.1% (target 2.5%); "
            "# of enterprise seats doubled. Next review: 2026-07-15.",
            "source_resource": "[[resource/2026-06-20/q2 report.pdf]]",
            "source_sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "notes": "First line of a multi-line note.\nSecond line, with a colon: here.\n\nAfter a blank line.\n",
            "figures": {"revenue": [120, 134.5], "regions": ["EMEA", "APAC"], "owner": None},
            "flags": [True, False],
            "empty_list": [],
            "quoted": ["no", "yes", "2026-06-20", "123", "on", "null", "~", "- dash", "key: value", "#hash", " padded "],
            "version": 3,
            "ratio": 0.25,
            "long_token": "x" * 120,
        },
        "# Q2 report\n\nRevenue and churn figures.\n",
        yaml.SafeDumper,
    ),
    "indented-lists": (
        {
            "name": "deploy-runbook",
            "description": "How we deploy the API: build the image, push it to the registry, roll the canary "
            "for fifteen minutes, then promote; roll back by re-tagging the previous image.",
            "memory_tags": ["deploy", "runbook"],
            "steps": ["build", "push", "canary", "promote"],
            "owners": {"primary": ["alice", "bob"], "backup": ["carol"]},
        },
        "1. build\n2. push\n",
        IndentedListDumper,
    ),
}


def main():
    for name, (meta, body, dumper) in CARDS.items():
        text = dump(meta, dumper)
        segments = {k: dump({k: meta[k]}, dumper) for k in meta}
        assert text == "".join(segments[k] for k in sorted(meta)), name
        card = "---\n" + text.strip() + "\n---\n\n" + body.strip() + "\n"
        with open(os.path.join(HERE, name + ".md"), "w", encoding="utf-8", newline="\n") as f:
            f.write(card)
        with open(os.path.join(HERE, name + ".json"), "w", encoding="utf-8", newline="\n") as f:
            json.dump({"keys": sorted(meta), "segments": segments}, f, ensure_ascii=False, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
