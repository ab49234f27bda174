"""Sessions as pages a person can read: one self-contained HTML file per session tree."""

from rpc_agent.export.html import default_output_path, page_data, render_page, write_page

__all__ = ["default_output_path", "page_data", "render_page", "write_page"]
