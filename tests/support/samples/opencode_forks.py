"""Sample MiMo Code and iCodeMate conversations, written into OpenCode's layouts by `synth.opencode` (agentsview `mimocode.go`, `icodemate.go`)."""

from __future__ import annotations
from pathlib import Path
import synth


FORKS = ["mimocode", "icodemate"]


CWD = "/home/dev/支付 service"


MARKERS = {
    "prompt": ["修复登录错误 PROMPT_FORK"],
    "thinking": ["THINK_FORK"],
    "call": ["pytest 测试_fork.py"],
    "result": ["TOOLOUT_FORK"],
    "reply": ["REPLY_FORK"],
}


def conversation(sid: str = "ses_fork1", prompt: str = "修复登录错误 PROMPT_FORK") -> synth.Conversation:
    call = synth.ToolCall(
        call_id="call_f1",
        name="bash",
        input={"command": "pytest 测试_fork.py"},
        output="TOOLOUT_FORK 1 failed",
        exit_code=1,
    )
    return synth.Conversation(
        id=sid,
        cwd=CWD,
        title="修复登录",
        model="mimo-v2",
        started=1_790_000_000.0,
        turns=[
            synth.Turn(role="user", text=prompt, ts=1_790_000_001.0),
            synth.Turn(
                role="assistant",
                text="修好了 REPLY_FORK。한국어: 완료",
                ts=1_790_000_005.0,
                reasoning="先运行测试 THINK_FORK",
                tool_calls=[call],
            ),
        ],
    )


def data_dir(home: Path, fork: str) -> Path:
    return home / ".local/share" / fork
