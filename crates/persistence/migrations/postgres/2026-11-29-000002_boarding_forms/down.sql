DROP TABLE boarding_forms;
