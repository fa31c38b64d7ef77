"""The mail agent's tools."""

from __future__ import annotations

from langchain_core.tools import tool


@tool
def read_inbox(folder: str) -> str:
    """Read the newest messages of a mail folder."""
    return "mail"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return "sent"


@tool
def book_meeting(when: str) -> str:
    """Book a meeting in the calendar."""
    return "booked"


MAIL_TOOLS = [read_inbox, send_email]
CALENDAR_TOOLS = [read_inbox, book_meeting]
