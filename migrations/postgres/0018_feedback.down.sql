DROP TABLE feedback;
