// Request traces for `kvplan simulate` (CSV or JSONL), streamed row by row.
#pragma once
