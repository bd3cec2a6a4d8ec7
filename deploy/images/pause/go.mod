module armada-temporal.local/images/pause

go 1.25
