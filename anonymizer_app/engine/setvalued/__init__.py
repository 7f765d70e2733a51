"""Set-valued data: transactions and set-valued columns, k^m-anonymity by Apriori (AA) with an item
hierarchy or with dynamic hierarchies."""

from .anonymize import SET_ALGORITHMS, SetResult, anonymize_transactions, km_holds
from .transactions import Transactions, column_transactions, parse_transactions

__all__ = ["SET_ALGORITHMS", "SetResult", "Transactions", "anonymize_transactions", "column_transactions",
           "km_holds", "parse_transactions"]
