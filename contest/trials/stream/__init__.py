"""The stream under test and its kill trials: `stage` (its folders, child process, feed
and check), `peer` (a peer format's stream: its reader, the oracle over the fed
files), `boundary` (kills at each format's own commit boundary), `sink` (the harness's
own sink: kill -9, replay, new checkpoint)."""
