DROP TABLE processor_notices;
