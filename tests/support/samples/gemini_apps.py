"""Sample Gemini Apps Takeout activity pages, built by code (agentsview `gemini_apps_takeout.go`)."""

from __future__ import annotations


def cell(label: str, when: str, content: str, product: str = "Gemini Apps") -> str:
    return (
        f'<div class="outer-cell mdl-cell"><div class="header-cell mdl-cell"><h3>{product}</h3><p>{label}<br></p><p>{when}</p></div>'
        f'<div class="content-cell mdl-cell">{content}</div><div class="content-cell mdl-cell">Products: {product}</div></div>'
    )


def page(*cells: str) -> str:
    return f'<!doctype html><html lang="en"><head><title>My Activity History</title><style>.x{{}}</style></head><body>{"".join(cells)}</body></html>'


def activity() -> str:
    return page(
        cell(
            "Prompted",
            "Jan 2, 2026, 3:04:05 PM EST",
            "<p>解释一下量子纠缠 PROMPT_GEM<br></p><p><strong>量子纠缠</strong>是 REPLY_GEM &amp; 更多</p><script>SCRIPT_GEM</script>",
        ),
        cell("Canvas", "Jan 3, 2026, 3:04:05 PM PST", "<p>CANVAS_GEM</p>"),
        cell(
            "Prompted", "Jan 4, 2026, 9:00:00 AM GMT+05:30", "<p>写一首诗 PROMPT2_GEM</p><p>春眠不觉晓 REPLY2_GEM</p>"
        ),
        cell("Searched for", "Jan 5, 2026, 9:00:00 AM PST", "<p>OTHERPRODUCT_GEM</p>", product="Search"),
    )
