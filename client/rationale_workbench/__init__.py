"""A small synchronous client for the Rationale Workbench REST API.

from rationale_workbench import Client
client = Client("http://127.0.0.1:8000", token="rwt_...")
client.projects.list()
"""

__version__ = "0.1.0"

from rationale_workbench.client import Client
from rationale_workbench.errors import ApiError, JobFailed, WaitTimeout

__all__ = ["ApiError", "Client", "JobFailed", "WaitTimeout", "__version__"]
