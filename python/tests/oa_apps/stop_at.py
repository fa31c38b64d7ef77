"""`StopAtTools`: the run ends with the output of `get_weather`, not another model call."""

from agents import Agent, StopAtTools, function_tool


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"The weather in {city} is sunny"


@function_tool
def sum_numbers(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


weather_agent = Agent(
    name="Weather",
    instructions="You are a helpful agent.",
    tools=[get_weather, sum_numbers],
    tool_use_behavior=StopAtTools(stop_at_tool_names=["get_weather"]),
)
